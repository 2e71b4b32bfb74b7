"""``neuron-env evaluate ENTRY``: your own model on the device, against the CPU.

A worker in the *target* interpreter (``--python``) loads ENTRY, runs the model's forward and
backward on the CPU and on the device from the same weights and inputs, and reports each stage
within a hard timeout.
"""

from __future__ import annotations

import enum
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import (
    console,
    format_choice,
    load_matrix,
    seconds_at_least,
    settings,
    write_output,
)
from neuron_env.cli.device import (
    DeviceOption,
    OutputOption,
    PythonOption,
    QuietOption,
    text_console,
)

if TYPE_CHECKING:
    from neuron_env.evaluate import Evaluation

DEFAULT_TIMEOUT = 600.0
DYNAMIC_SHAPES = "compile-dynamic-shapes"


class Format(str, enum.Enum):
    text = "text"
    json = "json"
    html = "html"


def evaluate(
    ctx: typer.Context,
    entry: Annotated[
        str,
        typer.Argument(
            metavar="ENTRY",
            help="module:function or path/to/file.py:function; see the protocol above.",
            show_default=False,
        ),
    ],
    python: PythonOption = None,
    device: DeviceOption = "neuron",
    compile: Annotated[
        bool,
        typer.Option("--compile", help="Also torch.compile(backend=..., dynamic=False) the model."),
    ] = False,
    shapes: Annotated[
        list[str] | None,
        typer.Option(
            "--shapes",
            metavar="SHAPES",
            help="Input shapes for the entry's inputs_for, e.g. 2x128,4x128 (may repeat; "
            "implies --compile): counts recompiles.",
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            callback=seconds_at_least(1),
            help="Seconds each stage may take (loading, eager, compile, each shape).",
        ),
    ] = DEFAULT_TIMEOUT,
    repeats: Annotated[
        int, typer.Option("--repeats", min=1, help="Timed repeats after the first call.")
    ] = 5,
    allow_fallback: Annotated[
        bool, typer.Option("--allow-fallback", help="Do not fail on ops that fell back to CPU.")
    ] = False,
    compile_backend: Annotated[
        str | None,
        typer.Option(
            "--compile-backend",
            help="torch.compile backend (default: neuron on neuron, aot_eager on cpu, inductor "
            "on cuda).",
        ),
    ] = None,
    format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="text, json, or html (one self-contained page).",
            callback=format_choice(Format),
        ),
    ] = "text",
    output: OutputOption = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Show every tensor and every op.")
    ] = False,
    quiet: QuietOption = False,
) -> None:
    """Run your model on the device and compare it with the CPU: numerics, CPU fallback, timings.

    \b
    ENTRY is a function without arguments that returns (model, inputs), or a dict
    (or any object) with these fields:
      model       a torch.nn.Module, built on the CPU
      inputs      a tensor, a tuple of arguments or a dict of keyword arguments
      loss_fn     optional: loss_fn(outputs[, targets]) -> scalar, for backward
      targets     optional: passed to loss_fn (moved to the device with the inputs)
      inputs_for  optional: inputs_for(shape) -> inputs, for --shapes
      shapes      optional: default shapes for --compile, e.g. [(2, 128), (4, 128)]
      tolerances  optional: {"output*": (rtol, atol), "bf16": (rtol, atol), ...}
      name        optional: the name to report (default: the model's class)
      backward    optional: False to compare the forward only

    \b
    Example file (my_model.py), run as: neuron-env evaluate my_model.py:make --compile
      import torch
      def make():
          model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.GELU())
          return model.eval(), torch.randn(8, 64)

    The model is built once (torch seeded), copied to the device, and given the same inputs.
    Without loss_fn, backward uses fixed random output gradients. Outputs, the loss and every
    parameter's gradient are compared per dtype (fp32 1e-3, bf16 3e-2, fp16 1e-2). Eager and
    compiled runs time the first call (compilation) apart from the steady state.

    Exits 0 when every stage passed, 1 when numerics are out of tolerance, an op fell back to
    CPU (unless --allow-fallback), a stage failed or the entry failed to run; 2 on bad input.
    """
    from neuron_env.cli import evaluate_views
    from neuron_env.evaluate import Request, parse_entry, parse_shapes
    from neuron_env.evaluate import evaluate as run_evaluation
    from neuron_env.probe.python_env import find_target_python
    from neuron_env.worker.devices import check_device

    parsed = parse_entry(entry)
    shape_list = parse_shapes(shapes or ())
    check_device(device)
    target = find_target_python(python)
    if output is not None:  # an unwritable report is bad input, said before a long evaluation
        write_output(output, "", append=True)
    compiling = compile or bool(shape_list)
    request = Request(
        target, parsed, device, compiling, shape_list, timeout, repeats, compile_backend
    )
    note = _dynamic_shapes_note(ctx) if compiling else None
    with evaluate_views.progress(console(stderr=True), quiet) as report:
        result = run_evaluation(
            request, allow_fallback=allow_fallback, dynamic_shapes=note, progress=report
        )
    if settings(ctx).debug:
        evaluate_views.print_tracebacks(console(stderr=True), result)
    _emit(result, Format(format), output, verbose)
    raise typer.Exit(0 if result.ok else 1)


def _dynamic_shapes_note(ctx: typer.Context) -> str | None:
    """The latest release's text for the dynamic-shapes limitation, quoted with recompiles."""
    release = load_matrix(ctx).latest()
    found = next((lim for lim in release.limitations if lim.id == DYNAMIC_SHAPES), None)
    return f"{found.summary} (Neuron {release.version})" if found else None


def _emit(result: Evaluation, format: Format, output: Path | None, verbose: bool) -> None:
    from neuron_env.cli import evaluate_views

    if format is Format.json:
        from neuron_env.evaluate.report import payload
        from neuron_env.serialize import envelope

        document = envelope("evaluate", payload(result))
        write_output(output, json.dumps(document, indent=2) + "\n")
    elif format is Format.html:
        from neuron_env.evaluate.html_report import render

        write_output(output, render(result))
    else:
        with text_console(output) as out:
            evaluate_views.print_evaluation(out, result, verbose)
    if output is not None:
        sys.stderr.write(f"Wrote {output}\n")


def register(app: typer.Typer) -> None:
    """Add ``evaluate`` to the top-level command group."""
    app.command("evaluate")(evaluate)
