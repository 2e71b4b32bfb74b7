"""Renderers: a doctor report as text, JSON, JUnit XML or GitHub Actions output.

Renderers lay out what the checks decided; they never decide a status themselves. The fleet
report (:mod:`.fleet`) and the matrix commands (:mod:`.matrix`) have their renderers here too.
"""

from __future__ import annotations

import io
import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from neuron_env.report.emit import Format

if TYPE_CHECKING:
    from rich.console import Console

    from neuron_env.checks.model import DoctorReport


def render(
    report: DoctorReport, output_format: str, *, verbose: bool = False, command: str = "doctor"
) -> str:
    """The report as text in ``output_format`` (text without colour, for files and pipes)."""
    if output_format == "json":
        from neuron_env.report.json_report import to_document

        return json.dumps(to_document(report, command), indent=2) + "\n"
    if output_format == "junit":
        from neuron_env.report.junit import render_junit

        return render_junit(report)
    if output_format == "github":
        from neuron_env.report.github import render_markdown

        return render_markdown(report, title=f"neuron-env {command}")
    return _plain_text(report, verbose, command)


def _plain_text(report: DoctorReport, verbose: bool, command: str) -> str:
    from neuron_env.report.console import PlainWriter
    from neuron_env.report.text import print_report

    buffer = io.StringIO()
    print_report(PlainWriter(buffer), report, verbose=verbose, command=command)
    return buffer.getvalue()


def print_text(out: Console, report: DoctorReport, **options: Any) -> None:
    """The text report straight to a terminal, in colour (``options``: verbose, command)."""
    from neuron_env.report.console import RichWriter
    from neuron_env.report.text import print_report

    print_report(RichWriter(out), report, **options)


def _render_as(output_format: str) -> Callable[..., str]:
    def rendered(report: DoctorReport, **options: Any) -> str:
        return render(report, output_format, **options)

    return rendered


def _deliver_github(report: DoctorReport, markdown: str, output: Path | None) -> None:
    """Workflow commands on stdout; the markdown summary appended to ``output``, else to
    ``$GITHUB_STEP_SUMMARY``, else on stdout."""
    from neuron_env.report.emit import write_text
    from neuron_env.report.github import workflow_commands

    sys.stdout.write("".join(line + "\n" for line in workflow_commands(report)))
    summary = output or (Path(p) if (p := os.environ.get("GITHUB_STEP_SUMMARY")) else None)
    write_text(summary, markdown, append=True)


DOCTOR_FORMATS: dict[str, Format] = {
    "text": Format(_render_as("text"), terminal=print_text, styled_only=True),
    "json": Format(_render_as("json")),
    "junit": Format(_render_as("junit")),
    "github": Format(_render_as("github"), deliver=_deliver_github),
}
FORMATS = tuple(DOCTOR_FORMATS)
