"""The human report: one ``path:line:col: severity rule-id message`` line per finding.

That first line is the form compilers use, so editors and terminals link it to the place; the
suggestion follows, indented. Data is escaped: nothing from a scanned file is read as markup.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.markup import escape

from neuron_env.scan.model import SEVERITIES, Finding, Rule, ScanReport, Severity
from neuron_env.wording import plural

STYLES = {"error": "red", "warning": "yellow", "note": "cyan"}


def print_report(out: Console, report: ScanReport, *, show_docs: bool = True) -> None:
    """Findings in file order, then a summary line and the docs of the rules that fired."""
    for item in report.findings:
        _print_finding(out, item)
    if report.findings:
        out.print()
    out.print(summary_line(report))
    if show_docs and report.findings:
        _print_docs(out, _rules_seen(report.findings))


def _print_finding(out: Console, item: Finding) -> None:
    where = f"{item.path}:{item.span.line}:{item.span.column}:"
    style = STYLES[item.severity]
    fixable = " [dim](fixable)[/]" if item.fix else ""
    out.print(
        f"[bold]{escape(where)}[/] [{style}]{item.severity}[/] "
        f"[bold]{item.rule.id}[/] {escape(item.message)}{fixable}",
        soft_wrap=True,
    )
    out.print(f"    [dim]→[/] {escape(item.suggestion)}", soft_wrap=True)


def summary_line(report: ScanReport) -> str:
    """``Checked 3 files against the Neuron 2.34.0 rules: 4 findings (1 error, 3 warnings).``"""
    files = plural(len(report.files), "file")
    checked = f"Checked {files} against the Neuron {report.rules.release} rules"
    if not report.findings:
        return f"{checked}: [green]no findings[/]."
    counts = report.counts()
    parts = [_count(counts[s], s) for s in SEVERITIES if counts[s]]
    line = f"{checked}: {plural(len(report.findings), 'finding')} ({', '.join(parts)})"
    fixable = len(report.fixable())
    return line + (f"; {fixable} fixable with --fix." if fixable else ".")


def _count(count: int, severity: Severity) -> str:
    return f"[{STYLES[severity]}]{plural(count, severity)}[/]"


def _rules_seen(findings: Sequence[Finding]) -> list[Rule]:
    seen: dict[str, Rule] = {}
    for item in findings:
        seen.setdefault(item.rule.id, item.rule)
    return sorted(seen.values(), key=lambda r: r.id)


def _print_docs(out: Console, rules: Sequence[Rule]) -> None:
    width = max(len(rule.id) for rule in rules)
    out.print("[dim]Docs:[/]")
    for rule in rules:
        out.print(f"  {rule.id:<{width}}  {escape(rule.help_uri)}", soft_wrap=True)
