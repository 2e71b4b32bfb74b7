"""``neuron-env facts`` and ``neuron-env doctor``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, settings
from neuron_env.cli.options import (
    DoctorLevelOption,
    DocumentOutputOption,
    JudgeReleaseOption,
    JudgeTorchOption,
    NoConfigOption,
    ProbeTimeoutOption,
    PythonOption,
    RedactOption,
    ReportFormatOption,
    ReportOutputOption,
    StrictOption,
    SysrootOption,
    VerboseOption,
    format_option,
)
from neuron_env.output.formats import FactsFormat, ReportFormat
from neuron_env.selftest.progress import device_progress


def facts(
    ctx: typer.Context,
    python: PythonOption = None,
    sysroot: SysrootOption = Path("/"),
    probe_timeout: ProbeTimeoutOption = 15.0,
    level: DoctorLevelOption = 0,
    output: DocumentOutputOption = None,
    output_format: Annotated[
        str,
        format_option(
            FactsFormat, "json (a snapshot doctor reads back) or text (Markdown for a bug report)."
        ),
    ] = "json",
    redact: RedactOption = False,
) -> None:
    """Collect a JSON snapshot of this host and a Python environment (facts only, no verdicts).

    Judge it later, anywhere: neuron-env doctor --facts FILE

    Examples:

      neuron-env facts --python .venv/bin/python -o host.json

      neuron-env facts --format text --redact > report.md
    """
    from neuron_env.doctor.output import FACTS, FactsReport
    from neuron_env.doctor.request import probe_request
    from neuron_env.doctor.workflow import probe_host_facts
    from neuron_env.output.emit import emit
    from neuron_env.redact import redact_facts

    choice = chosen_format(FactsFormat, output_format)
    probed = probe_host_facts(probe_request(python, sysroot, probe_timeout, level, device_progress))
    markdown = ""
    if choice is FactsFormat.text:
        from neuron_env.doctor.facts_report import markdown_report

        markdown = markdown_report(settings(ctx).matrix_dirs, probed, redact=redact)
    shown = redact_facts(probed) if redact else probed
    raise typer.Exit(emit(FACTS, FactsReport(shown, markdown), choice, output))


def doctor(
    ctx: typer.Context,
    python: PythonOption = None,
    sysroot: SysrootOption = Path("/"),
    probe_timeout: ProbeTimeoutOption = 15.0,
    facts_file: Annotated[
        Path | None,
        typer.Option(
            "--facts",
            metavar="FILE",
            help="Judge a saved snapshot instead of this host ('-': read it from stdin).",
            dir_okay=False,
        ),
    ] = None,
    release: JudgeReleaseOption = None,
    torch: JudgeTorchOption = None,
    level: DoctorLevelOption = 0,
    check: Annotated[
        list[str] | None,
        typer.Option("--check", metavar="ID", help="Run only this check id (repeatable)."),
    ] = None,
    skip: Annotated[
        list[str] | None,
        typer.Option("--skip", metavar="ID", help="Do not run this check id (repeatable)."),
    ] = None,
    list_checks: Annotated[
        bool, typer.Option("--list-checks", help="List the check ids and exit.")
    ] = False,
    output_format: ReportFormatOption = "text",
    output: ReportOutputOption = None,
    strict: StrictOption = False,
    verbose: VerboseOption = False,
    redact: RedactOption = False,
    no_config: NoConfigOption = False,
) -> None:
    """Validate this host and a Python environment for TorchNeuron; say what to fix.

    Exit 0 when ready (warnings allowed unless --strict), 1 when a check fails, 2 on bad input,
    3 when nothing failed but a check could not judge (its probe could not run), or on a host
    with no Neuron device, ready except the checks that need Trainium hardware (it names them).

    Examples:

      neuron-env doctor

      neuron-env doctor --release 2.34.0 --torch 2.14

      neuron-env doctor --facts host.json --format json
    """
    from neuron_env.doctor.entry import DoctorArgs, run_doctor_command

    choice = chosen_format(ReportFormat, output_format)
    if list_checks:
        raise typer.Exit(_list_checks(choice, output))
    args = DoctorArgs(
        python=python,
        sysroot=sysroot,
        probe_timeout=probe_timeout,
        facts_file=facts_file,
        release=release,
        torch=torch,
        level=level,
        check=tuple(check or ()),
        skip=tuple(skip or ()),
        output_format=output_format,
        output=output,
        strict=strict,
        verbose=verbose,
        redact=redact,
        no_config=no_config,
        matrix_dirs=tuple(settings(ctx).matrix_dirs),
    )
    raise typer.Exit(run_doctor_command(args))


def _list_checks(choice: ReportFormat, output: Path | None) -> int:
    """The check ids as a table, or (``--format json``) as the doctor-checks envelope."""
    from neuron_env.checks.model import CheckListing
    from neuron_env.checks.registry import CHECKS
    from neuron_env.doctor.output import CHECK_LIST
    from neuron_env.output.emit import emit
    from neuron_env.output.formats import DocumentFormat

    listed = DocumentFormat.json if choice is ReportFormat.json else DocumentFormat.text
    return emit(CHECK_LIST, CheckListing(tuple(CHECKS)), listed, output)
