"""The human report: one ``path:line:col: severity rule-id message`` line per finding.

That first line is the form compilers use, so editors and terminals link it to the place; the
suggestion follows, indented. The report is built as one string and written once (thousands of
findings cost about what the JSON report costs; rich's per-line markup rendering cost 2×), with
ANSI colours only on a colour terminal. Text from scanned files is escaped: a control character in
a string constant or a file name is shown as ``\\x1b``, never sent to the terminal.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from rich.console import Console

from neuron_env.scan.model import SEVERITIES, Finding, Rule, RuleSet, ScanReport, Severity
from neuron_env.wording import plural

STYLES = {"error": "31", "warning": "33", "note": "36", "green": "32", "bold": "1", "dim": "2"}
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]")


def print_report(out: Console, report: ScanReport, *, show_docs: bool = True) -> None:
    """Findings in file order, then a summary line and the docs of the rules that fired."""
    color = out.is_terminal and out.color_system is not None and not out.no_color
    out.file.write(render_report(report, color=color, show_docs=show_docs))
    out.file.flush()


def render_report(report: ScanReport, *, color: bool = False, show_docs: bool = True) -> str:
    paint = _painter(color)
    parts = [_finding(paint, item) for item in report.findings]
    if report.findings:
        parts.append("\n")
    parts.append(summary_line(report, paint) + "\n")
    if show_docs and report.findings:
        parts.append(_docs(paint, _rules_seen(report.findings)))
    return "".join(parts)


class _Paint:
    def __init__(self, color: bool) -> None:
        self.color = color

    def __call__(self, text: str, style: str) -> str:
        return f"\x1b[{STYLES[style]}m{text}\x1b[0m" if self.color else text


def _painter(color: bool) -> _Paint:
    return _Paint(color)


def clean(text: str) -> str:
    """Control characters (ESC, CR, U+2028...) as visible escapes."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)


def _finding(paint: _Paint, item: Finding) -> str:
    fixable = " " + paint("(fixable)", "dim") if item.fix else ""
    return (
        f"{paint(clean(item.where) + ':', 'bold')} {paint(item.severity, item.severity)} "
        f"{paint(item.rule.id, 'bold')} {clean(item.message)}{fixable}\n"
        f"    {paint('→', 'dim')} {clean(item.suggestion)}\n"
    )


def summary_line(report: ScanReport, paint: _Paint | None = None) -> str:
    """``Checked 3 files against the Neuron 2.34.0 rules: 4 findings (1 error, 3 warnings).``"""
    paint = paint or _painter(False)
    files = plural(len(report.files), "file")
    checked = f"Checked {files} against the Neuron {report.rules.release} rules"
    if not report.findings:
        return f"{checked}: {paint('no findings', 'green')}."
    counts = report.counts()
    parts = [_count(paint, counts[s], s) for s in SEVERITIES if counts[s]]
    line = f"{checked}: {plural(len(report.findings), 'finding')} ({', '.join(parts)})"
    fixable = len(report.fixable())
    return line + (f"; {fixable} fixable with --fix." if fixable else ".")


def _count(paint: _Paint, count: int, severity: Severity) -> str:
    return paint(plural(count, severity), severity)


def _rules_seen(findings: Sequence[Finding]) -> list[Rule]:
    seen: dict[str, Rule] = {}
    for item in findings:
        seen.setdefault(item.rule.id, item.rule)
    return sorted(seen.values(), key=lambda r: r.id)


def _docs(paint: _Paint, rules: Sequence[Rule]) -> str:
    width = max(len(rule.id) for rule in rules)
    lines = [paint("Docs:", "dim")]
    lines += [f"  {rule.id:<{width}}  {clean(rule.help_uri)}" for rule in rules]
    return "\n".join(lines) + "\n"


def print_rules(out: Console, rules: RuleSet) -> None:
    """``scan --list-rules`` as text: a table of the release's rules, then each rule's docs."""
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    table = Table("Rule", "Severity", "From", "What it finds", show_edge=False, pad_edge=False)
    for rule in rules.rules:
        title = Text(rule.title)
        if not rule.confirmed:
            title.append(" (unconfirmed)", style="yellow")
        table.add_row(rule.id, rule.severity, rule.origin, title)
    out.print(f"Rules of neuron-env scan for Neuron {rules.release}:")
    out.print(table)
    out.print("\nDocs:")
    width = max(len(rule.id) for rule in rules.rules)
    for rule in rules.rules:
        out.print(f"  {rule.id:<{width}}  {escape(rule.help_uri)}", soft_wrap=True)
