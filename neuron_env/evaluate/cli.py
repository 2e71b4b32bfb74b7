"""``neuron-env evaluate ENTRY``: your own model on the device, against the CPU.

A worker in the *target* interpreter (``--python``) loads ENTRY, runs the model's forward and
backward on the CPU and on the device from the same weights and inputs, and reports each stage
within a hard timeout.
"""

from __future__ import annotations

from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, console, settings, write_output
from neuron_env.cli.options import (
    AllowFallbackOption,
    CompileBackendOption,
    DeviceOption,
    PythonOption,
    QuietOption,
    RedactOption,
    RepeatsOption,
    ReportOutputOption,
    StageTimeoutOption,
    VerboseOption,
    format_option,
)
from neuron_env.output.formats import EvaluationFormat

DEFAULT_TIMEOUT = 600.0


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
    timeout: StageTimeoutOption = DEFAULT_TIMEOUT,
    repeats: RepeatsOption = 5,
    allow_fallback: AllowFallbackOption = False,
    compile_backend: CompileBackendOption = None,
    format: Annotated[
        str, format_option(EvaluationFormat, "text, json, or html (one self-contained page).")
    ] = "text",
    output: ReportOutputOption = None,
    verbose: VerboseOption = False,
    quiet: QuietOption = False,
    redact: RedactOption = False,
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
    from neuron_env.evaluate import output as views
    from neuron_env.evaluate.workflow import EvaluateRequest, evaluate_entry
    from neuron_env.output.emit import emit

    request = EvaluateRequest(
        entry=entry,
        python=python,
        device=device,
        compile=compile,
        shapes=tuple(shapes or ()),
        timeout=timeout,
        repeats=repeats,
        compile_backend=compile_backend,
        allow_fallback=allow_fallback,
        matrix_dirs=settings(ctx).matrix_dirs,
        before_run=None if output is None else lambda: write_output(output, "", append=True),
        progress=None if quiet else views.progress,
    )
    result = evaluate_entry(request)
    if redact:  # before anything is shown: the tracebacks, every format
        from neuron_env.redact_text import local_redactor, redact_object

        result = redact_object(result, local_redactor())
    if settings(ctx).debug:
        views.print_tracebacks(console(stderr=True), result)
    choice = chosen_format(EvaluationFormat, format)
    raise typer.Exit(emit(views.EVALUATION, result, choice, output, verbose=verbose))
