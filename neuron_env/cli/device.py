"""``neuron-env smoke`` and ``neuron-env selftest``: does the device compute correctly, how fast?

Both run a worker in the *target* interpreter (``--python``) with a hard timeout per case.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import (
    console,
    format_choice,
    load_matrix,
    print_json,
    seconds_at_least,
    write_output,
)
from neuron_env.errors import BadInput

if TYPE_CHECKING:
    from rich.console import Console

    from neuron_env.selftest import Peak, SuiteResult

DEFAULT_TIMEOUT = 300.0


class Format(str, enum.Enum):
    text = "text"
    json = "json"
    junit = "junit"


class Level(str, enum.Enum):
    quick = "quick"
    standard = "standard"
    long = "long"


PythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        help="Target interpreter (default: the active virtualenv, else neuron-env's own).",
        dir_okay=False,
    ),
]
DeviceOption = Annotated[
    str, typer.Option("--device", help="neuron, neuron:N, cpu, cuda or cuda:N.")
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout",
        callback=seconds_at_least(1),
        help="Seconds each case (and the worker's start) may take.",
    ),
]
FormatOption = Annotated[
    str,
    typer.Option(
        "--format", metavar="FORMAT", help="text, json or junit.", callback=format_choice(Format)
    ),
]
OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the report to FILE.", dir_okay=False)
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")]
KeepGoingOption = Annotated[
    bool,
    typer.Option(
        "--keep-going",
        help="After a case hangs or the worker dies, run the rest anyway (default: report "
        "them as not run: the device is suspect).",
    ),
]


def smoke(
    python: PythonOption = None,
    device: DeviceOption = "neuron",
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    format: FormatOption = "text",
    output: OutputOption = None,
    quiet: QuietOption = False,
    keep_going: KeepGoingOption = False,
) -> None:
    """Quick device check: availability and count, then a matmul vs CPU in fp32 and bf16.

    Reports max abs/rel error, first call (includes compilation) and steady state apart.

    The ops that fell back to CPU must be none. Exits 1 when anything failed, 2 on bad input.

    Example: neuron-env smoke --python /opt/aws_neuronx_venv_torch_neuronx_2_14_0/bin/python
    """
    from neuron_env.cli import device_views
    from neuron_env.probe.python_env import find_target_python
    from neuron_env.selftest import check_device, run_smoke

    target = find_target_python(python)
    check_device(device)
    with device_views.progress(console(stderr=True), quiet) as report:
        result = run_smoke(
            target, device=device, timeout=timeout, keep_going=keep_going, progress=report
        )
    _emit(result, Format(format), output, verbose=False)
    raise typer.Exit(0 if result.ok else 1)


def selftest(
    ctx: typer.Context,
    level: Annotated[
        Level,
        typer.Option(
            "--level",
            help="quick: ops, training, beta behaviours; standard: + "
            "2-process all-reduce; long: + sustained matmul and copy bandwidth.",
        ),
    ] = Level.quick,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="Run only matching cases: a case (matmul), case/dtype, "
            "a variant, or a glob ('*/bf16/compile'). May repeat.",
        ),
    ] = None,
    list_cases: Annotated[bool, typer.Option("--list", help="List the cases and exit.")] = False,
    python: PythonOption = None,
    device: DeviceOption = "neuron",
    timeout: TimeoutOption = DEFAULT_TIMEOUT,
    format: FormatOption = "text",
    output: OutputOption = None,
    allow_fallback: Annotated[
        bool, typer.Option("--allow-fallback", help="Do not fail on ops that fell back to CPU.")
    ] = False,
    chip: Annotated[
        str | None, typer.Option("--chip", help="Chip for the throughput peak, e.g. trainium2.")
    ] = None,
    instance_type: Annotated[
        str | None,
        typer.Option("--instance-type", help="Instance type for the peak, e.g. trn2.48xlarge."),
    ] = None,
    compile_backend: Annotated[
        str | None,
        typer.Option(
            "--compile-backend",
            help="torch.compile backend (default: neuron on "
            "neuron, aot_eager on cpu, inductor on cuda).",
        ),
    ] = None,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Timed repeats after the first call.")
    ] = 5,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Show every tensor.")] = False,
    quiet: QuietOption = False,
    keep_going: KeepGoingOption = False,
) -> None:
    """Kernel self-test: each case on the device vs CPU, eager and torch.compile, fwd and bwd.

    Per case: pass, fail, fell back to CPU, unsupported by design, skipped, error or timeout.

    Error figures are shown against the tolerance; the first call apart from the steady state.

    Exits 1 when a case failed, errored, timed out or fell back to CPU; 2 on bad input.

    Example: neuron-env selftest --level standard --format junit -o selftest.xml
    """
    from neuron_env.cli import device_views
    from neuron_env.probe.python_env import find_target_python
    from neuron_env.selftest import check_device, run_suite, select_variants

    if list_cases:
        _list(level.value, Format(format), output)
        return
    select_variants(level.value, only or ())
    target = find_target_python(python)
    check_device(device)
    peak = _peak(ctx, chip, instance_type)
    with device_views.progress(console(stderr=True), quiet) as report:
        result = run_suite(
            target,
            level=level.value,
            device=device,
            only=only or (),
            timeout=timeout,
            compile_backend=compile_backend,
            repeats=repeats,
            allow_fallback=allow_fallback,
            peak=peak,
            keep_going=keep_going,
            progress=report,
        )
    _emit(result, Format(format), output, verbose)
    raise typer.Exit(0 if result.ok else 1)


def _peak(ctx: typer.Context, chip: str | None, instance_type: str | None) -> Peak | None:
    if chip is None and instance_type is None:
        return None
    from neuron_env.selftest.peak import peak_for

    if chip is not None and instance_type is not None:
        raise BadInput("Give either --chip or --instance-type, not both.")
    return peak_for(load_matrix(ctx).latest(), chip=chip, instance_type=instance_type)


def _list(level: str, format: Format, output: Path | None) -> None:
    from neuron_env.cli import device_views

    if format is Format.json:
        _write_json(
            "selftest-list", {"level": level, "cases": device_views.case_list(level)}, output
        )
    else:
        with text_console(output) as out:
            device_views.print_case_list(out, level)


def _emit(result: SuiteResult, format: Format, output: Path | None, verbose: bool) -> None:
    from neuron_env.cli import device_views
    from neuron_env.selftest import SmokeResult, report

    if format is Format.json:
        _write_json(report.command_name(result), report.payload(result), output)
    elif format is Format.junit:
        write_output(output, report.junit(result))
    else:
        with text_console(output) as out:
            if isinstance(result, SmokeResult):
                device_views.print_smoke(out, result)
            else:
                device_views.print_suite(out, result, verbose)


def _write_json(command: str, payload: dict[str, object], output: Path | None) -> None:
    if output is None:
        print_json(command, payload)
        return
    from neuron_env.serialize import envelope

    write_output(output, json.dumps(envelope(command, payload), indent=2) + "\n")


@contextmanager
def text_console(output: Path | None) -> Iterator[Console]:
    if output is None:
        yield console()
        return
    from rich.console import Console as RichConsole

    try:
        output.parent.mkdir(parents=True, exist_ok=True)  # as the json and junit reports do
        handle = output.open("w", encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"Cannot write the report to {output}: {exc.strerror}.") from None
    with handle:
        yield RichConsole(file=handle, width=120, no_color=True, highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``smoke`` and ``selftest`` to the top-level command group."""
    app.command("smoke")(smoke)
    app.command("selftest")(selftest)
