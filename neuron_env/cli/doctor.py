"""``neuron-env facts`` and ``neuron-env doctor``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import check_format, console, device_progress, settings, write_output
from neuron_env.cli.options import (
    JudgeReleaseOption,
    JudgeTorchOption,
    ProbeTimeoutOption,
    PythonOption,
    ReportFormatOption,
    ReportOutputOption,
    SysrootOption,
)

if TYPE_CHECKING:
    from neuron_env.checks.model import Check, DoctorReport

LevelOption = typer.Option(
    "--level",
    min=0,
    max=2,
    metavar="0|1|2",
    help="0: host and environment; 1: also the device smoke test; 2: also the standard self-test.",
)


def facts(
    python: PythonOption = None,
    sysroot: SysrootOption = Path("/"),
    probe_timeout: ProbeTimeoutOption = 15.0,
    level: Annotated[int, LevelOption] = 0,
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", metavar="FILE", help="Write the snapshot to FILE.", dir_okay=False
        ),
    ] = None,
) -> None:
    """Collect a JSON snapshot of this host and a Python environment (facts only, no verdicts).

    Judge it later, anywhere: neuron-env doctor --facts FILE

    Example: neuron-env facts --python .venv/bin/python -o host.json
    """
    from neuron_env.facts import snapshot
    from neuron_env.operations.doctor import FactsRequest, collect_host_facts

    request = FactsRequest(
        python=python,
        sysroot=sysroot,
        probe_timeout=probe_timeout,
        level=level,
        device_progress=device_progress,
    )
    collected = collect_host_facts(request)
    text = json.dumps(snapshot(collected), indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)


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
            help="Judge a saved snapshot instead of this host.",
            dir_okay=False,
        ),
    ] = None,
    release: JudgeReleaseOption = None,
    torch: JudgeTorchOption = None,
    level: Annotated[
        int,
        typer.Option(
            "--level", min=0, max=2, metavar="0|1|2", help="0: host and environment only."
        ),
    ] = 0,
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
    strict: Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show details of every check.")
    ] = False,
) -> None:
    """Validate this host and a Python environment for TorchNeuron; say what to fix.

    Exit 0 when ready (warnings allowed unless --strict), 1 when a check fails or cannot run,
    2 on bad input.

    Examples:

      neuron-env doctor

      neuron-env doctor --release 2.34.0 --torch 2.14

      neuron-env doctor --facts host.json --format json
    """
    from neuron_env.checks.registry import CHECKS
    from neuron_env.operations.doctor import DoctorRequest, run_doctor
    from neuron_env.report import FORMATS

    if list_checks:
        _print_checks(CHECKS)
        return
    check_format(output_format, FORMATS)
    request = DoctorRequest(
        matrix_dirs=settings(ctx).matrix_dirs,
        release=release,
        torch=torch,
        only=tuple(check or ()),
        skipped=tuple(skip or ()),
        strict=strict,
        level=level,
        facts_file=facts_file,
        python=python,
        sysroot=sysroot,
        probe_timeout=probe_timeout,
        device_progress=device_progress,
    )
    report = run_doctor(request)
    _emit(report, output_format, output, verbose)
    raise typer.Exit(report.summary.exit_code)


def _emit(report: DoctorReport, output_format: str, output: Path | None, verbose: bool) -> None:
    from neuron_env.report import render
    from neuron_env.report.text import print_report

    if output_format == "text" and output is None:
        print_report(console(), report, verbose=verbose)  # straight to the terminal, in colour
        return
    rendered = render(report, output_format, verbose=verbose)
    if output_format == "github":
        _emit_github(report, rendered, output)
    elif output is not None:
        write_output(output, rendered)
    else:
        sys.stdout.write(rendered)


def _emit_github(report: DoctorReport, markdown: str, output: Path | None) -> None:
    from neuron_env.report.github import workflow_commands

    for line in workflow_commands(report):
        sys.stdout.write(line + "\n")
    summary_file = output or (Path(p) if (p := os.environ.get("GITHUB_STEP_SUMMARY")) else None)
    if summary_file is None:
        sys.stdout.write(markdown)
    else:
        with summary_file.open("a", encoding="utf-8") as handle:
            handle.write(markdown)


def _print_checks(checks: Sequence[Check]) -> None:
    from rich.table import Table

    table = Table("Check id", "Category", "What it checks", show_edge=False, pad_edge=False)
    for check in checks:
        table.add_row(check.id, check.category, check.description)
    console().print(table)
