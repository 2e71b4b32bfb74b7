"""The human report: findings grouped by category with ✓ ! ✗ marks and fixes under problems."""

from __future__ import annotations

import textwrap

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from neuron_env.checks.model import CATEGORIES, DoctorReport, Finding

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
WORDS = {"ok": "ok", "warn": "warnings", "fail": "failed", "skip": "skipped", "error": "errors"}


def print_report(
    out: Console, report: DoctorReport, *, verbose: bool = False, command: str = "doctor"
) -> None:
    facts = report.facts
    where = facts.hostname or "this host"
    instance = facts.ec2.instance_type if facts.ec2 and facts.ec2.instance_type else None
    out.print(
        f"[bold]neuron-env {command}[/] · {escape(where)}" + (f" ({instance})" if instance else "")
    )
    out.print(
        f"[dim]Judged against Neuron {report.release} ({escape(report.release_reason)}); "
        f"PyTorch {report.torch or '—'} ({escape(report.torch_reason)}).[/]",
    )
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
        for i, chunk in enumerate(textwrap.wrap(label + body, room) or [""]):
            prefix = lead if first else Text(" " * indent)
            first = False
            if i == 0 and label:
                out.print(
                    prefix + Text(label, style="cyan") + Text(chunk[len(label) :], style=style)
                )
            else:
                out.print(prefix + Text(chunk, style=style))


def _summary_line(report: DoctorReport) -> str:
    summary = report.summary
    parts = [f"{n} {WORDS[s]}" for s, n in summary.counts.items() if n]
    colour = {"ok": "green", "warn": "yellow", "fail": "red"}.get(summary.status, "red")
    verdict = {"ok": "Ready", "warn": "Ready, with warnings", "fail": "Not ready"}[summary.status]
    strict = " (--strict: warnings fail)" if summary.strict and summary.status == "warn" else ""
    took = f" in {report.facts.duration_s:.2f} s" if report.facts.duration_s else ""
    return f"[bold {colour}]{verdict}[/]{strict}: {', '.join(parts)}{took}."
