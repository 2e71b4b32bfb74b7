"""``neuron-env smoke`` and ``neuron-env selftest``: does the device compute correctly, how fast?

Both run a worker in the *target* interpreter (``--python``) with a hard timeout per case.
"""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, settings
from neuron_env.cli.options import (
    AllowFallbackOption,
    CaseTimeoutOption,
    CompileBackendOption,
    DeviceOption,
    PeakInstanceTypeOption,
    PythonOption,
    QuietOption,
    RepeatsOption,
    ReportOutputOption,
    SelftestLevelOption,
    VerboseOption,
    format_option,
)
from neuron_env.output.formats import SuiteFormat
from neuron_env.selftest.progress import device_progress

DEFAULT_TIMEOUT = 300.0


class Level(str, enum.Enum):
    quick = "quick"
    standard = "standard"
    long = "long"


FormatOption = Annotated[str, format_option(SuiteFormat, "text, json or junit.")]
KeepGoingOption = Annotated[
    bool,
    typer.Option(
        "--keep-going",
        help="After a case hangs or the worker dies, run the rest anyway (default: report "
        "them as not run: the device is suspect).",
    ),
]


def smoke(
    ctx: typer.Context,
    python: PythonOption = None,
    device: DeviceOption = "neuron",
    timeout: CaseTimeoutOption = DEFAULT_TIMEOUT,
    format: FormatOption = "text",
    output: ReportOutputOption = None,
    quiet: QuietOption = False,
    keep_going: KeepGoingOption = False,
) -> None:
    """Quick device check: availability and count, then a matmul vs CPU in fp32 and bf16.

    Reports max abs/rel error, first call (includes compilation) and steady state apart.

    The ops that fell back to CPU must be none. Exits 1 when anything failed, 2 on bad input.

    Example: neuron-env smoke --python /opt/aws_neuronx_venv_torch_neuronx_2_14_0/bin/python
    """
    from neuron_env.output.emit import emit
    from neuron_env.selftest.output import SUITE
    from neuron_env.selftest.workflow import SmokeRequest, run_smoke_test

    request = SmokeRequest(
        python=python,
        device=device,
        timeout=timeout,
        keep_going=keep_going,
        matrix_dirs=settings(ctx).matrix_dirs,
        progress=None if quiet else device_progress,
    )
    result = run_smoke_test(request)
    raise typer.Exit(emit(SUITE, result, chosen_format(SuiteFormat, format), output))


def selftest(
    ctx: typer.Context,
    level: Annotated[Level, SelftestLevelOption] = Level.quick,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            metavar="CASE",
            help="Run only matching cases: a case (matmul), case/dtype, "
            "a variant, or a glob ('*/bf16/compile'). May repeat.",
        ),
    ] = None,
    list_cases: Annotated[bool, typer.Option("--list", help="List the cases and exit.")] = False,
    python: PythonOption = None,
    device: DeviceOption = "neuron",
    timeout: CaseTimeoutOption = DEFAULT_TIMEOUT,
    format: FormatOption = "text",
    output: ReportOutputOption = None,
    allow_fallback: AllowFallbackOption = False,
    chip: Annotated[
        str | None,
        typer.Option(
            "--chip", metavar="CHIP", help="Chip for the throughput peak, e.g. trainium2."
        ),
    ] = None,
    instance_type: PeakInstanceTypeOption = None,
    compile_backend: CompileBackendOption = None,
    repeats: RepeatsOption = 5,
    verbose: VerboseOption = False,
    quiet: QuietOption = False,
    keep_going: KeepGoingOption = False,
) -> None:
    """Kernel self-test: each case on the device vs CPU, eager and torch.compile, fwd and bwd.

    Per case: pass, fail, fell back to CPU, unsupported by design, skipped, error or timeout.

    Error figures are shown against the tolerance; the first call apart from the steady state.

    Exits 1 when a case failed, errored, timed out or fell back to CPU; 2 on bad input.

    Example: neuron-env selftest --level standard --format junit -o selftest.xml
    """
    from neuron_env.output.emit import emit
    from neuron_env.selftest.output import CASE_LIST, SUITE
    from neuron_env.selftest.workflow import SelftestRequest, run_selftest
    from neuron_env.selftest.workflow import list_cases as listing

    choice = chosen_format(SuiteFormat, format)
    if list_cases:
        raise typer.Exit(emit(CASE_LIST, listing(level.value), choice, output))
    request = SelftestRequest(
        level=level.value,
        only=tuple(only or ()),
        python=python,
        device=device,
        timeout=timeout,
        allow_fallback=allow_fallback,
        chip=chip,
        instance_type=instance_type,
        compile_backend=compile_backend,
        repeats=repeats,
        keep_going=keep_going,
        matrix_dirs=settings(ctx).matrix_dirs,
        progress=None if quiet else device_progress,
    )
    raise typer.Exit(emit(SUITE, run_selftest(request), choice, output, verbose=verbose))
