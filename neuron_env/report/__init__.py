"""Renderers: a doctor report as text, JSON, JUnit XML or GitHub Actions output.

Renderers lay out what the checks decided; they never decide a status themselves. The fleet
report (:mod:`.fleet`) and the matrix commands (:mod:`.matrix`) have their renderers here too.
"""

from __future__ import annotations

import io
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuron_env.checks.model import DoctorReport

FORMATS = ("text", "json", "junit", "github")


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
    from neuron_env.report.console import new_console
    from neuron_env.report.text import print_report

    buffer = io.StringIO()
    plain = new_console(file=buffer)
    print_report(plain, report, verbose=verbose, command=command)
    return buffer.getvalue()
