"""The human report: findings grouped by category with ✓ ! ✗ marks and fixes under problems.

The report is laid out here once, as lines of :data:`~neuron_env.output.console.Span` (text and a
style name), and written through a :class:`~neuron_env.output.console.Writer`: in colour by rich on
a terminal, or as plain text with no rich at all into files and pipes (a plain doctor run never
imports it). Both write the same characters, so the layout (the wrapping, the hanging indents) is
decided here, never by the sink.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from neuron_env.checks.model import CATEGORIES, Check, DoctorReport, Finding
from neuron_env.escape import terminal
from neuron_env.output.console import Span, Writer
from neuron_env.wording import join_words, plural, wrap_words

if TYPE_CHECKING:
    from rich.console import Console

MARKS: dict[str, Span] = {
    "ok": ("✓", "green"),
    "warn": ("!", "yellow"),
    "fail": ("✗", "red"),
    "skip": ("-", "dim"),
    "error": ("?", "red"),
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
# "unknown": a check could not judge and nothing failed; neither "ready" nor "not ready" is true.
VERDICTS = {
    "ok": "Ready",
    "warn": "Ready, with warnings",
    "fail": "Not ready",
    "unknown": "Could not judge",
}
CHOSEN_BY = {
    "--python": "chosen by --python",
    "$VIRTUAL_ENV": "the active virtual environment, $VIRTUAL_ENV",
    "./.venv-neuron": "./.venv-neuron in this folder",
    "neuron-env's own environment": (
        "neuron-env's own environment: no --python, $VIRTUAL_ENV or ./.venv-neuron named another"
    ),
    "--facts": "from the --facts snapshot",
}
HARDWARE_VERDICT = "Ready except what needs Trainium hardware"
NO_DEVICE = "this host has no Neuron device"
WORDS = {"ok": "ok", "warn": "warning", "fail": "failed", "skip": "skipped", "error": "error"}
COUNTED = ("warning", "error")
"""Nouns among ``WORDS``: "1 warning", "2 warnings" (the others are participles)."""


def print_report(
    out: Writer, report: DoctorReport, *, verbose: bool = False, command: str = "doctor"
) -> None:
    """The doctor's (or preflight's) report as text on ``out``: the host and what it was judged
    against, the checks by category with each problem's fix (details when ``verbose``), then the
    summary line."""
    facts = report.facts
    where = facts.hostname or "this host"
    instance = facts.ec2.instance_type if facts.ec2 and facts.ec2.instance_type else None
    out.line(
        (f"neuron-env {command}", "bold"),
        (f" · {terminal(where)}" + (f" ({terminal(instance)})" if instance else ""), ""),
    )
    judged = (
        f"Judged against Neuron {report.release} ({report.release_reason}); "
        f"PyTorch {report.torch or '—'} ({report.torch_reason})."
    )
    for line in _wrap(terminal(judged), out.width):
        out.line((line, "dim"))
    _print_target(out, report)
    if report.legacy_host:  # said once, here; the checks below judge what runs on this host
        for line in _wrap(terminal(report.legacy_host), out.width):
            out.line((line, "bold"))
    _print_config(out, report)
    width = max((len(f.check) for f in report.findings), default=0)
    for category in CATEGORIES:
        members = [f for f in report.findings if f.category == category]
        if members:
            out.line()
            out.line((CATEGORY_TITLES[category], "bold"))
            for finding in members:
                reads = _reads(report, finding) if verbose else ""
                _print_finding(out, finding, width, verbose, _allowed_why(report, finding), reads)
    out.line()
    # One line, never wrapped: the verdict a CI log is searched for, and the check ids it names
    # (a terminal folds it on screen; copied, it is one line).
    verdict, rest = _summary_line(report)
    out.line(verdict, (rest, ""))


def _print_target(out: Writer, report: DoctorReport) -> None:
    """The interpreter judged and how it was chosen; on neuron-env's own environment, the
    command to create one."""
    python = report.facts.python
    if python is None:
        return
    how = CHOSEN_BY.get(report.target_chosen_by, report.target_chosen_by)
    judged = f"Target: {python.executable} (Python {python.version}" + (f"; {how})" if how else ")")
    for line in _wrap(terminal(judged), out.width):
        out.line((line, "dim"))
    if report.next_step:  # the command on a line of its own, never wrapped: it is pasted
        create = "This is neuron-env's own environment (no PyTorch). Create a TorchNeuron one"
        if report.unlisted_os:  # the same words as platform.os's fix
            create += (
                f" (unsupported: Neuron {report.release} does not list {report.unlisted_os}; "
                "the command installs the manylinux wheels anyway)"
            )
        for line in _wrap(terminal(create + ":"), out.width):
            out.line((line, "bold"))
        out.line(("  " + terminal(report.next_step), ""))


def _print_config(out: Writer, report: DoctorReport) -> None:
    """The project file applied, and each one ignored with its reason."""
    lines = [f"Project settings: {report.config}."] if report.config else []
    lines += [f"Ignored project file {path}: {why}." for path, why in report.config_ignored]
    for text in lines:
        for line in _wrap(terminal(text), out.width):
            out.line((line, "dim"))


def _wrap(text: str, width: int) -> list[str]:
    """``text`` in lines of ``width`` (see :func:`wrap_words`); one empty line for no text."""
    return wrap_words(text, width) or [""]


def _allowed_why(report: DoctorReport, finding: Finding) -> str | None:
    """Who allowed ``finding`` to fail (the project file and its reason, or --allow); None when
    not allowed."""
    if not report.summary.is_allowed(finding):
        return None
    return report.summary.allowed_by.get(finding.check, "allowed by --allow")


def _reads(report: DoctorReport, finding: Finding) -> str:
    """Where a passing check's facts came from (the failures' details already say)."""
    from neuron_env.doctor.sources import read_from

    if finding.status != "ok":
        return ""
    return read_from(report.needs.get(finding.check, ()), report.facts)


def _print_finding(
    out: Writer,
    finding: Finding,
    width: int,
    verbose: bool,
    allowed: str | None = None,
    read_from: str = "",
) -> None:
    note = ""
    if allowed is not None:
        separator = ";" if ": " in allowed else ":"  # allowed by FILE: reason; / by --allow:
        note = f" ({allowed}{separator} does not fail the run)"
    lines: list[Line] = [("", "", finding.summary + note)]
    if finding.detail and (verbose or finding.status in ("fail", "error")):
        lines.append(("", "dim", finding.detail))
    if verbose and read_from:
        lines.append(("read: ", "dim", read_from))
    if finding.fix and finding.status != "ok":
        lines.append(("fix: ", "", finding.fix))
    lead = [("  ", ""), MARKS[finding.status], (f" {finding.check:<{width}}  ", "")]
    print_hanging(out, lead, lines, width + 6)


Line = tuple[str, str, str]
"""(cyan label, style, text) of one logical line."""


def print_hanging(out: Writer, lead: Sequence[Span], lines: list[Line], indent: int) -> None:
    """``lead``, then the lines wrapped with a hanging indent and no trailing spaces.

    A ``fix:`` line is never wrapped: it is a command to paste, and a line break inside it
    would run half of it. The terminal may fold it on screen; copied, it is still one line.
    """
    room = max(40, out.width - indent)
    first = True
    for label, style, body in lines:
        text = label + terminal(body, keep_newlines=True)  # data never drives the terminal
        # Long words (paths, URLs, package==version pins) stay whole, so they can be copied:
        # never split into a line of their own choosing, nor at a hyphen of a package name.
        chunks = text.split("\n") if label in UNWRAPPED else _wrap(text, room)
        for i, chunk in enumerate(chunks):
            prefix: Sequence[Span] = lead if first else [(" " * indent, "")]
            first = False
            if i == 0 and label:
                out.line(*prefix, (label, "cyan"), (chunk[len(label) :], style))
            else:
                out.line(*prefix, (chunk, style))


UNWRAPPED = ("fix: ",)
"""Labels of lines printed whole, however wide: commands to paste."""


def _summary_line(report: DoctorReport) -> tuple[Span, str]:
    """The verdict (coloured) and the rest of the summary line: the counts (the JSON report's,
    every check by its status: one count in both), then which of them --allow let through and
    which wait for Trainium hardware on a host without it."""
    summary = report.summary
    allowed = [f for f in report.findings if summary.is_allowed(f) and f.status in PROBLEMS]
    waiting = [f.check for f in report.findings if summary.waits_for_hardware(f)]
    counted = summary.counts
    parts = [_count(counted[s], WORDS[s]) for s in summary.counts if counted.get(s)]
    colour = {"ok": "green", "warn": "yellow", "fail": "red", "unknown": "magenta"}[summary.status]
    verdict = VERDICTS[summary.status]
    strict = " (--strict: warnings fail)" if summary.strict and summary.status == "warn" else ""
    took = f" in {report.facts.duration_s:.2f} s" if report.facts.duration_s else ""
    judged = "" if any(f.status != "skip" for f in report.findings) else "nothing was judged, "
    counts = f"{judged}{', '.join(parts) or 'nothing else checked'}{took}"
    hardware = f"{', '.join(waiting)} ({NO_DEVICE})"
    if waiting and summary.status == "unknown" and not counted["error"]:
        return (HARDWARE_VERDICT, "bold yellow"), f"{_allowed_note(allowed)}: {hardware}; {counts}."
    also = f"; needs Trainium hardware: {hardware}" if waiting else ""
    if summary.uncompared:  # nothing to judge them by: the run is not "Ready"
        also += f"; not compared (nothing to judge by): {', '.join(summary.uncompared)}"
    return (verdict, f"bold {colour}"), f"{strict}{_allowed_note(allowed)}: {counts}{also}."


def _count(number: int, word: str) -> str:
    """``1 warning``, ``2 warnings``, ``3 failed``."""
    return plural(number, word) if word in COUNTED else f"{number} {word}"


def _allowed_note(allowed: list[Finding]) -> str:
    """`` (2 failures and 1 warning allowed: driver.module, ...)``: what --allow let through."""
    if not allowed:
        return ""
    failures = sum(f.status != "warn" for f in allowed)
    warnings = len(allowed) - failures
    kinds = [plural(n, word) for n, word in ((failures, "failure"), (warnings, "warning")) if n]
    return f" ({join_words(kinds)} allowed: {', '.join(f.check for f in allowed)})"


def print_checks(out: Console, checks: Sequence[Check]) -> None:
    """``doctor --list-checks``: each check's id, category, what it checks, and whether it needs
    Trainium hardware (a host without a Neuron device cannot pass it)."""
    from rich.table import Table

    table = Table(
        "Check id", "Category", "Needs hardware", "What it checks", show_edge=False, pad_edge=False
    )
    for check in checks:
        needs = "yes" if check.needs_hardware else ""
        table.add_row(check.id, check.category, needs, check.description)
    out.print(table)
    out.print(
        "Checks that need hardware cannot pass on a host with no Neuron device: there, doctor "
        "names them and says whether everything else is ready (exit 3)."
    )
