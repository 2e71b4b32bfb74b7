"""``neuron-env facts`` and ``neuron-env doctor``."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import console, load_matrix, seconds_at_least, write_output
from neuron_env.errors import BadInput

if TYPE_CHECKING:
    from neuron_env.checks.model import Check, DoctorReport
    from neuron_env.doctor import DoctorOptions
    from neuron_env.facts import HostFacts

PythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Target interpreter to inspect (default: the active virtualenv, else this one).",
        dir_okay=False,
    ),
]
LevelOption = typer.Option(
    "--level",
    min=0,
    max=2,
    metavar="0|1|2",
    help="0: host and environment; 1: also the device smoke test; 2: also the standard self-test.",
)
ProbeTimeoutOption = Annotated[
    float,
    typer.Option(
        "--probe-timeout",
        callback=seconds_at_least(0.5),
        metavar="SECONDS",
        help="Give each probe at most this many seconds.",
    ),
]
SysrootOption = Annotated[
    Path,
    typer.Option(
        "--sysroot",
        metavar="DIR",
        help="Read the host through this directory (e.g. /host from a container).",
        file_okay=False,
    ),
]


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

    collected = _collect(python, sysroot, probe_timeout, level)
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
    release: Annotated[
        str | None,
        typer.Option("--release", "-r", metavar="R", help="Judge against this Neuron release."),
    ] = None,
    torch: Annotated[
        str | None,
        typer.Option("--torch", metavar="X.Y", help="Judge against this PyTorch minor, e.g. 2.14."),
    ] = None,
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
    output_format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="text, json, junit or github.")
    ] = "text",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            help="Write the report to FILE instead of stdout.",
            dir_okay=False,
        ),
    ] = None,
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
    from neuron_env.doctor import DoctorOptions
    from neuron_env.report import FORMATS

    if list_checks:
        _print_checks(CHECKS)
        return
    if output_format not in FORMATS:
        raise BadInput(f"--format '{output_format}' is not one of: {', '.join(FORMATS)}.")
    options = DoctorOptions(release, torch, tuple(check or ()), tuple(skip or ()), strict, level)
    report = run_doctor(ctx, options, facts_file, python, sysroot, probe_timeout)
    _emit(report, output_format, output, verbose)
    raise typer.Exit(report.summary.exit_code)


def run_doctor(
    ctx: typer.Context,
    options: DoctorOptions,
    facts_file: Path | None,
    python: Path | None,
    sysroot: Path,
    probe_timeout: float,
) -> DoctorReport:
    """Facts (live or from a snapshot) judged against the matrix; shared with preflight."""
    from neuron_env.doctor import check_request, judge
    from neuron_env.worker.interrupts import stop_on_interrupt

    # The device levels run in the pool's thread, which signals cannot reach: Ctrl-C or SIGTERM
    # here kills their workers, and the run ends with exit 130 once the thread has returned.
    guard = stop_on_interrupt("device test") if options.level else contextlib.nullcontext()
    with guard, ThreadPoolExecutor(max_workers=1) as pool:  # probe the host while matrix loads
        host = pool.submit(_facts_for, facts_file, python, sysroot, probe_timeout, options.level)
        matrix = load_matrix(ctx)
        check_request(matrix, options.release, options.torch)
        return judge(matrix, host.result(), options)


def _facts_for(
    facts_file: Path | None, python: Path | None, sysroot: Path, probe_timeout: float, level: int
) -> HostFacts:
    from neuron_env.facts import read_snapshot

    if facts_file is None:
        return _collect(python, sysroot, probe_timeout, level)
    if python is not None or sysroot != Path("/"):
        raise BadInput(
            "--facts judges a saved snapshot; it cannot be combined with --python or --sysroot."
        )
    snapshot = read_snapshot(facts_file)
    recorded = _levels_held(snapshot)
    if level > recorded:
        raise BadInput(
            f"{facts_file} holds level-{recorded} facts; --level {level} needs the device results.",
            hint=f"Collect them on the host with 'neuron-env facts --level {level} -o FILE'.",
        )
    return snapshot


def _levels_held(snapshot: HostFacts) -> int:
    """The device level whose results the snapshot holds (not merely the one it claims)."""
    device = snapshot.device
    if device is None or device.smoke is None:
        return 0
    if device.selftest is None and device.smoke.ok:  # a failed smoke test stops the suite
        return min(device.level, 1)
    return device.level


def _collect(python: Path | None, sysroot: Path, probe_timeout: float, level: int) -> HostFacts:
    from neuron_env.probe.collect import ProbeOptions, collect_facts
    from neuron_env.probe.python_env import find_target_python

    if not sysroot.is_dir():
        raise BadInput(f"--sysroot {sysroot} is not a directory.")
    target = find_target_python(python)
    started = time.monotonic()
    facts = collect_facts(ProbeOptions.capped(probe_timeout, sysroot=sysroot, python=target))
    return _with_device(facts, target, level, started) if level else facts


def _with_device(facts: HostFacts, target: Path, level: int, started: float) -> HostFacts:
    """Run the device levels in the target interpreter, with progress on stderr; the duration
    then covers them too."""
    import dataclasses

    from neuron_env.cli import device_views
    from neuron_env.probe.device import probe_device

    with device_views.progress(console(stderr=True), quiet=False) as report:
        device = probe_device(target, level, progress=report)
    took = round(time.monotonic() - started, 3)
    return dataclasses.replace(facts, device=device, duration_s=took)


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
