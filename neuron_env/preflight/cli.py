"""``neuron-env preflight``: doctor for CI jobs and schedulers, with a stable exit-code contract."""

from __future__ import annotations

import dataclasses
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import project_defaults, settings, write_output
from neuron_env.cli.options import (
    CheckTimeoutOption,
    JudgeReleaseOption,
    JudgeTorchOption,
    NoConfigOption,
    PreflightLevelOption,
    PreflightOutputOption,
    ProbeTimeoutOption,
    PythonOption,
    StrictOption,
    SysrootOption,
    format_option,
)
from neuron_env.errors import BadInput
from neuron_env.output.formats import ReportFormat
from neuron_env.selftest.progress import device_progress

if TYPE_CHECKING:
    from neuron_env.checks.model import DoctorReport
    from neuron_env.preflight.slurm import OutputPlan


def preflight(
    ctx: typer.Context,
    torch: JudgeTorchOption = None,
    release: JudgeReleaseOption = None,
    level: PreflightLevelOption = None,
    python: PythonOption = None,
    sysroot: SysrootOption = Path("/"),
    output_format: Annotated[
        str | None,
        format_option(
            ReportFormat,
            "text, json, junit or github (default: github on GitHub Actions, junit files on "
            "GitLab CI, else text).",
        ),
    ] = None,
    output: PreflightOutputOption = None,
    strict: StrictOption = False,
    allow: Annotated[
        list[str] | None,
        typer.Option(
            "--allow", metavar="ID", help="A check that may fail without failing the run."
        ),
    ] = None,
    probe_timeout: ProbeTimeoutOption = 15.0,
    emit: Annotated[
        str | None,
        typer.Option(
            "--emit", metavar="WHAT", help="Print an integration instead: slurm-healthcheck."
        ),
    ] = None,
    timeout: CheckTimeoutOption = 120.0,
    no_config: NoConfigOption = False,
) -> None:
    """Gate a CI job or a node on a healthy Trainium environment (doctor + device levels).

    Exit 0 ready (warnings allowed unless --strict; --allow-ed checks never fail), 1 not ready
    (a check failed), 2 preflight misused, 3 could not judge (a check's probe could not run).

    Examples:

      neuron-env preflight --torch 2.14 --output reports/

      neuron-env preflight --allow env.cache --strict

      neuron-env preflight --emit slurm-healthcheck --python /opt/venv/bin/python > healthcheck.sh
    """
    from neuron_env.doctor.request import DoctorOptions, DoctorRequest, probe_request
    from neuron_env.doctor.workflow import run_doctor
    from neuron_env.preflight.slurm import (
        EMITTABLE,
        HealthcheckRequest,
        detect_ci,
        plan_outputs,
        slurm_healthcheck,
    )

    # the flags win over the project file; --allow adds to its allow
    flags = DoctorOptions(release=release, torch=torch, strict=strict, allow=tuple(allow or ()))
    judging = flags.over(project_defaults(no_config, say_ignored=emit is not None))
    if emit is not None:
        if emit not in EMITTABLE:
            raise BadInput(f"--emit '{emit}' is not one of: {', '.join(EMITTABLE)}.")
        healthcheck = HealthcheckRequest(
            matrix_dirs=settings(ctx).matrix_dirs,
            torch=judging.torch,
            release=judging.release,
            level=level or 0,
            python=python,
            sysroot=sysroot,
            strict=strict,
            allow=judging.allow,
            timeout=timeout,
        )
        sys.stdout.write(slurm_healthcheck(healthcheck))
        return
    level = 1 if level is None else level
    request = DoctorRequest(
        facts=probe_request(python, sysroot, probe_timeout, level, device_progress),
        judging=dataclasses.replace(judging, level=level),
        matrix_dirs=settings(ctx).matrix_dirs,
    )
    report = run_doctor(request)
    raise typer.Exit(_deliver(report, plan_outputs(output_format, output, detect_ci(os.environ))))


def _deliver(report: DoctorReport, plan: OutputPlan) -> int:
    """The report where ``plan`` says (stdout through emit, then each file); the exit code."""
    from neuron_env.doctor.github import workflow_commands
    from neuron_env.doctor.output import DOCTOR, render
    from neuron_env.output.emit import emit

    if plan.annotations:
        sys.stdout.write("".join(line + "\n" for line in workflow_commands(report)))
    exit_code = emit(DOCTOR, report, ReportFormat(plan.stdout), command="preflight")
    for path, output_format in plan.files:
        write_output(path, render(report, ReportFormat(output_format), command="preflight"))
    if plan.step_summary is not None:
        markdown = render(report, ReportFormat.github, command="preflight")
        write_output(plan.step_summary, markdown, append=True)
    return exit_code
