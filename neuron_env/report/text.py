"""The human report: findings grouped by category with ✓ ! ✗ marks and fixes under problems."""

from __future__ import annotations

import textwrap
from collections import Counter

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from neuron_env.checks.model import CATEGORIES, DoctorReport, Finding
from neuron_env.escape import terminal
from neuron_env.wording import join_words, plural

MARKS = {
    "ok": "[green]✓[/]",
    "warn": "[yellow]![/]",
    "fail": "[red]✗[/]",
    "skip": "[dim]-[/]",
    "error": "[red]?[/]",
}
CATEGORY_TITLES = {
    "platform": "Platform",
    "driver": "Neuron driver",
    "system": "System packages",
    "python": "Python environment",
    "env": "Environment",
    "device": "Device",
}
PROBLEMS = ("warn", "fail", "error")
WORDS = {"ok": "ok", "warn": "warnings", "fail": "failed", "skip": "skipped", "error": "errors"}


def print_report(
    out: Console, report: DoctorReport, *, verbose: bool = False, command: str = "doctor"
) -> None:
    """The doctor's (or preflight's) report as text on ``out``: the host and what it was judged
    against, the checks by category with each problem's fix (details when ``verbose``), then the
    summary line."""
    facts = report.facts
    where = facts.hostname or "this host"
    instance = facts.ec2.instance_type if facts.ec2 and facts.ec2.instance_type else None
    out.print(
        f"[bold]neuron-env {command}[/] · {shown(where)}"
        + (f" ({shown(instance)})" if instance else ""),
        soft_wrap=True,
    )
    judged = (
        f"Judged against Neuron {report.release} ({report.release_reason}); "
        f"PyTorch {report.torch or '—'} ({report.torch_reason})."
    )
    lines = textwrap.wrap(
        terminal(judged), out.width, break_long_words=False, break_on_hyphens=False
    )
    for line in lines:
        out.print(Text(line, style="dim"), soft_wrap=True)  # split at spaces only, never mid-word
    width = max((len(f.check) for f in report.findings), default=0)
    for category in CATEGORIES:
        members = [f for f in report.findings if f.category == category]
        if members:
            out.print(f"\n[bold]{CATEGORY_TITLES[category]}[/]")
            for finding in members:
                _print_finding(out, finding, width, verbose, report.summary.is_allowed(finding))
    out.print()
    out.print(_summary_line(report))


def _print_finding(
    out: Console, finding: Finding, width: int, verbose: bool, allowed: bool = False
) -> None:
    note = " (allowed by --allow: does not fail the run)" if allowed else ""
    lines: list[Line] = [("", "", finding.summary + note)]
    if finding.detail and (verbose or finding.status in ("fail", "error")):
        lines.append(("", "dim", finding.detail))
    if finding.fix and finding.status != "ok":
        lines.append(("fix: ", "", finding.fix))
    lead = Text.from_markup(f"  {MARKS[finding.status]} {finding.check:<{width}}  ")
    print_hanging(out, lead, lines, width + 6)


Line = tuple[str, str, str]
"""(cyan label, style, text) of one logical line."""


def print_hanging(out: Console, lead: Text, lines: list[Line], indent: int) -> None:
    """``lead``, then the lines wrapped with a hanging indent and no trailing spaces."""
    room = max(40, out.width - indent)
    first = True
    for label, style, body in lines:
        text = label + terminal(body, keep_newlines=True)  # data never drives the terminal
        # Long words (paths, URLs) stay whole, so they can be copied and never split into a
        # line of their own choosing; rich must not wrap the lines again.
        for i, chunk in enumerate(textwrap.wrap(text, room, break_long_words=False) or [""]):
            prefix = lead if first else Text(" " * indent)
            first = False
            if i == 0 and label:
                line = prefix + Text(label, style="cyan") + Text(chunk[len(label) :], style=style)
            else:
                line = prefix + Text(chunk, style=style)
            out.print(line, soft_wrap=True)


def shown(value: str) -> str:
    """A value from a snapshot or the matrix, for rich markup: inert, and never markup itself."""
    return escape(terminal(value))


def _summary_line(report: DoctorReport) -> str:
    summary = report.summary
    allowed = [f for f in report.findings if summary.is_allowed(f) and f.status in PROBLEMS]
    counted = Counter(str(f.status) for f in report.findings if f not in allowed)
    parts = [f"{counted[s]} {WORDS[s]}" for s in summary.counts if counted[s]]
    colour = {"ok": "green", "warn": "yellow", "fail": "red"}.get(summary.status, "red")
    verdict = {"ok": "Ready", "warn": "Ready, with warnings", "fail": "Not ready"}[summary.status]
    strict = " (--strict: warnings fail)" if summary.strict and summary.status == "warn" else ""
    took = f" in {report.facts.duration_s:.2f} s" if report.facts.duration_s else ""
    judged = "" if any(f.status != "skip" for f in report.findings) else "nothing was judged, "
    return (
        f"[bold {colour}]{verdict}[/]{strict}{_allowed_note(allowed)}: {judged}"
        f"{', '.join(parts) or 'nothing else checked'}{took}."
    )


def _allowed_note(allowed: list[Finding]) -> str:
    """`` (2 failures and 1 warning allowed: driver.module, ...)``: what --allow let through."""
    if not allowed:
        return ""
    failures = sum(f.status != "warn" for f in allowed)
    warnings = len(allowed) - failures
    kinds = [plural(n, word) for n, word in ((failures, "failure"), (warnings, "warning")) if n]
    return f" ({join_words(kinds)} allowed: {', '.join(f.check for f in allowed)})"
