"""``neuron-env doctor`` once its command line is read: the request, the run, the report.

Both readers of the command line end here: typer's (``doctor/cli.py``, every option, ``--help``
and the usage errors) and the quick one (``doctor/quick.py``), which reads the common command
lines without importing typer. This module imports neither parser.
"""

from __future__ import annotations

from dataclasses import field
from pathlib import Path

from neuron_env.frozen import frozen


@frozen
class DoctorArgs:
    """The doctor's options as read from its command line (each option's own default when it
    is not given), with ``--check``/``--skip`` as tuples."""

    python: Path | None = None
    sysroot: Path = Path("/")
    probe_timeout: float = 15.0
    facts_file: Path | None = None
    release: str | None = None
    torch: str | None = None
    level: int = 0
    check: tuple[str, ...] = ()
    skip: tuple[str, ...] = ()
    output_format: str = "text"
    output: Path | None = None
    strict: bool = False
    verbose: bool = False
    redact: bool = False
    no_config: bool = False
    matrix_dirs: tuple[Path, ...] = field(default=())


def run_doctor_command(args: DoctorArgs) -> int:
    """Judge the host (or ``--facts``) as ``args`` ask, write the report; the exit code."""
    from neuron_env.doctor.output import DOCTOR
    from neuron_env.doctor.request import DoctorOptions, DoctorRequest, probe_request
    from neuron_env.doctor.workflow import run_doctor
    from neuron_env.output.emit import emit
    from neuron_env.output.formats import ReportFormat
    from neuron_env.project_config import load_project_defaults
    from neuron_env.selftest.progress import device_progress

    choice = ReportFormat(args.output_format)
    judging = DoctorOptions(
        release=args.release,
        torch=args.torch,
        only=args.check,
        skipped=args.skip,
        strict=args.strict,
        level=args.level,
        hardware_optional=True,
    )
    request = DoctorRequest(
        facts=probe_request(
            args.python, args.sysroot, args.probe_timeout, args.level, device_progress
        ),
        judging=judging.over(load_project_defaults(enabled=not args.no_config)),
        facts_file=args.facts_file,
        matrix_dirs=list(args.matrix_dirs),
    )
    report = run_doctor(request)
    if args.redact:
        from neuron_env.redact import redact_report

        report = redact_report(report)
    return emit(DOCTOR, report, choice, args.output, verbose=args.verbose)
