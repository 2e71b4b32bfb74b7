"""The doctor's (and preflight's) report as text, JSON, JUnit XML or GitHub Actions output."""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuron_env.checks.model import CheckListing, DoctorReport
from neuron_env.facts import HostFacts
from neuron_env.frozen import frozen
from neuron_env.output.emit import DONE, Format, Outcome, Output, document, dumps
from neuron_env.output.formats import DocumentFormat, FactsFormat, ReportFormat

if TYPE_CHECKING:
    from rich.console import Console


def outcome(report: DoctorReport) -> Outcome:
    """The verdict (ok, warn or fail) and the exit code the checks decided."""
    return Outcome(report.summary.status, report.summary.exit_code)


def render(report: DoctorReport, choice: ReportFormat, **options: Any) -> str:
    """The report in ``choice`` as one string (text without colour, for files and pipes)."""
    return DOCTOR.to_format(choice).render(report, **options)


def _text(report: DoctorReport, *, verbose: bool = False, command: str = "doctor") -> str:
    from neuron_env.doctor.text import print_report
    from neuron_env.output.console import PlainWriter

    buffer = io.StringIO()
    print_report(PlainWriter(buffer), report, verbose=verbose, command=command)
    return buffer.getvalue()


def print_text(out: Console, report: DoctorReport, **options: Any) -> None:
    """The text report straight to a terminal, in colour (``options``: verbose, command)."""
    from neuron_env.doctor.text import print_report
    from neuron_env.output.console import RichWriter

    print_report(RichWriter(out), report, **options)


def _json(report: DoctorReport, *, command: str = "doctor", **_: Any) -> str:
    from neuron_env.doctor.document import to_document

    return dumps(to_document(report, command))


def _junit(report: DoctorReport, **_: Any) -> str:
    from neuron_env.doctor.junit import render_junit

    return render_junit(report)


def _markdown(report: DoctorReport, *, command: str = "doctor", **_: Any) -> str:
    from neuron_env.doctor.github import render_markdown

    return render_markdown(report, title=f"neuron-env {command}")


def _deliver_github(report: DoctorReport, markdown: str, output: Path | None) -> None:
    """Workflow commands on stdout; the markdown summary appended to ``output``, else to
    ``$GITHUB_STEP_SUMMARY``, else on stdout."""
    from neuron_env.doctor.github import workflow_commands
    from neuron_env.output.emit import write_text

    sys.stdout.write("".join(line + "\n" for line in workflow_commands(report)))
    summary = output or (Path(p) if (p := os.environ.get("GITHUB_STEP_SUMMARY")) else None)
    write_text(summary, markdown, append=True)


DOCTOR: Output[DoctorReport, ReportFormat] = Output(
    DoctorReport,
    ReportFormat,
    {
        ReportFormat.text: Format(_text, terminal=print_text, styled_only=True),
        ReportFormat.json: Format(_json),
        ReportFormat.junit: Format(_junit),
        ReportFormat.github: Format(_markdown, deliver=_deliver_github),
    },
    outcome,
)


# --- neuron-env facts: the snapshot, or a Markdown bug report -----------------------------------


@frozen
class FactsReport:
    """What ``facts`` collected, and (``--format text``) the Markdown report made of it."""

    facts: HostFacts
    markdown: str = ""


def _snapshot(report: FactsReport, **_: Any) -> str:
    from neuron_env.facts import SNAPSHOT_COMMAND

    return dumps(document(SNAPSHOT_COMMAND, {"facts": report.facts}, DONE))


def _bug_report(report: FactsReport, **_: Any) -> str:
    return report.markdown


FACTS: Output[FactsReport, FactsFormat] = Output(
    FactsReport,
    FactsFormat,
    {FactsFormat.json: Format(_snapshot), FactsFormat.text: Format(_bug_report)},
)


# --- doctor --list-checks -----------------------------------------------------------------------


def _print_checks(out: Console, listing: CheckListing, **_: Any) -> None:
    from neuron_env.doctor.text import print_checks

    print_checks(out, listing.checks)


def _checks_text(listing: CheckListing, **_: Any) -> str:
    from neuron_env.output.console import plain_text

    return plain_text(_print_checks, listing)


def _checks_json(listing: CheckListing, **_: Any) -> str:
    rows = [
        {"id": c.id, "category": c.category, "title": c.title, "description": c.description,
         "level": c.level, "needs_hardware": c.needs_hardware}
        for c in listing.checks
    ]  # fmt: skip
    return dumps(document("doctor-checks", {"checks": rows}, DONE))


CHECK_LIST: Output[CheckListing, DocumentFormat] = Output(
    CheckListing,
    DocumentFormat,
    {
        DocumentFormat.text: Format(_checks_text, terminal=_print_checks),
        DocumentFormat.json: Format(_checks_json),
    },
)
