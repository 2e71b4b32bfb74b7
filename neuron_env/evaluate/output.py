"""``neuron-env evaluate``: progress, the text view, and its formats (layout only).

:data:`FORMATS` is an evaluation's output formats for :func:`neuron_env.output.emit.emit`: text,
JSON (the versioned envelope) and html (one self-contained page). A report written to a file is
said on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from neuron_env.errors import EXIT_FAILED, EXIT_OK
from neuron_env.evaluate import Evaluation, ModelInfo, Progress, ProgressCallback, StageResult
from neuron_env.evaluate.html_report import render
from neuron_env.evaluate.report import payload
from neuron_env.output.console import new_console, plain_text
from neuron_env.output.device_views import (
    device_rows,
    key_value_grid,
    print_outcome,
    problem_errors,
    status_text,
)
from neuron_env.output.emit import Format, Outcome, Output, document, dumps, write_text
from neuron_env.output.formats import EvaluationFormat
from neuron_env.wording import seconds
from neuron_env.worker.events import comparison_line
from neuron_env.worker.results import Comparison

WORST_SHOWN = 5  # failing tensors listed per stage without -v

STAGE_TEXT = {
    "load": "loading the entry and running it on the CPU",
    "eager": "eager on the device",
    "compile": "torch.compile on the device",
}


# --- progress -----------------------------------------------------------------------------------


@contextmanager
def progress() -> Iterator[ProgressCallback]:
    """Progress on stderr: a spinner naming the stage on a terminal, else a line per stage."""
    err = new_console(stderr=True)
    if err.is_terminal:
        with err.status("starting the worker") as status:
            yield lambda event: _update(err, status, event)
    else:
        yield lambda event: _print_line(err, event)


def _update(err: Console, status: object, event: Progress) -> None:
    if event.kind == "start":
        status.update(Text(STAGE_TEXT.get(event.name, event.name) + " …"))  # type: ignore[attr-defined]
    elif event.kind == "stage" and event.result is not None:
        err.print(_line(event.result))


def _print_line(err: Console, event: Progress) -> None:
    if event.kind == "started" and event.info is not None:
        err.print(Text(f"  worker started: torch {event.info.torch} on {event.info.device}"))
    elif event.kind == "start" and event.name in STAGE_TEXT:
        err.print(Text(f"  {STAGE_TEXT[event.name]} …"))
    elif event.kind == "stage" and event.result is not None:
        err.print(_line(event.result))


def _line(result: StageResult) -> Text:
    line = Text(f"  {result.name}  ")
    line.append_text(status_text(result.status))
    passed = result.status == "pass"
    line.append(f"  {seconds(result.steady_s)}" if passed else f"  {result.message}")
    return line


# --- report -------------------------------------------------------------------------------------


def print_evaluation(out: Console, evaluation: Evaluation, verbose: bool = False) -> None:
    name = evaluation.model.name if evaluation.model is not None else evaluation.entry
    out.print(Text(f"Evaluate · {name} · {evaluation.device} · {evaluation.python}", style="bold"))
    out.print(_header(evaluation))
    if evaluation.stages:
        out.print(_stage_table(evaluation))
        _print_numerics(out, evaluation, verbose)
        _print_ops(out, evaluation, verbose)
        _print_compilation(out, evaluation)
    if evaluation.advice:
        out.print(Text("Advice", style="bold"))
        bullets = Table.grid(padding=(0, 1))
        bullets.add_column()
        bullets.add_column()
        for line in evaluation.advice:
            bullets.add_row("  •", Text(line))
        out.print(bullets)
    _print_footer(out, evaluation)


def _header(evaluation: Evaluation) -> Table:
    grid = key_value_grid()
    grid.add_row("Entry", Text(evaluation.entry))
    if evaluation.info is not None:
        device_rows(grid, evaluation.info)
    model = evaluation.model
    if model is not None:
        grid.add_row("Model", Text(_model_line(model)))
        grid.add_row("Inputs", Text(_inputs_line(model)))
        grid.add_row("Backward", Text(_backward_line(model)))
    if evaluation.compile and evaluation.info is not None:
        backend = evaluation.info.compile_backend
        grid.add_row("Compile", Text(f"torch.compile(backend={backend!r}, dynamic=False)"))
    return grid


def _model_line(model: ModelInfo) -> str:
    dtypes = ", ".join(model.dtypes) or "no parameters"
    mode = "training" if model.training else "eval"
    kind = f"{model.model_class}, " if model.model_class != model.name else ""
    return (
        f"{model.name} ({kind}from {model.source}): {model.parameters:,} parameters, {dtypes}, "
        f"{mode} mode"
    )


def _inputs_line(model: ModelInfo) -> str:
    shown = [f"{i.name} {'×'.join(map(str, i.shape))} {i.dtype}" for i in model.inputs]
    return ", ".join(shown) or "—"


def _backward_line(model: ModelInfo) -> str:
    if not model.backward:
        return "none (the entry says backward = False): outputs only"
    if model.loss:
        return "loss_fn(outputs[, targets]).backward(): the loss and every parameter's gradient"
    return "fixed random gradients of the outputs (no loss_fn): every parameter's gradient compared"


def _stage_table(evaluation: Evaluation) -> Table:
    table = Table(show_edge=False, pad_edge=False, header_style="bold")
    for column in ("Stage", "Result", "Measured", "First call", "Steady"):
        table.add_column(column, overflow="fold")
    for stage in evaluation.stages:
        table.add_row(
            stage.name,
            status_text(stage.status),
            Text(stage.message),
            seconds(stage.first_call_s),
            seconds(stage.steady_s),
        )
    return table


def _print_numerics(out: Console, evaluation: Evaluation, verbose: bool) -> None:
    rows = [
        (stage.name, c)
        for stage in evaluation.stages
        for c in (stage.comparisons if verbose else stage.failing_comparisons()[:WORST_SHOWN])
    ]
    if not rows:
        return
    out.print(Text("Tensors" + (" out of tolerance" if not verbose else ""), style="bold"))
    for stage_name, c in rows:
        out.print(_comparison_text(stage_name, c))


def _comparison_text(stage: str, c: Comparison) -> Text:
    line = Text(f"  {stage}  ")
    line.append("✓ " if c.ok else "✗ ", style="green" if c.ok else "red bold")
    figures = comparison_line(c, not c.ok)
    line.append(figures if not c.ok else f"{c.tensor}: {figures}")
    return line


def _print_ops(out: Console, evaluation: Evaluation, verbose: bool) -> None:
    eager = evaluation.stage("eager")
    counts = eager.op_counts if eager is not None else {}
    line = Text("CPU fallback: ", style="bold")
    fallback = evaluation.fallback_ops
    calls = f"{len(counts)} ATen ops, {sum(counts.values())} calls in one eager step"
    if fallback:
        listed = ", ".join(f"{op} ×{counts[op]}" if op in counts else op for op in fallback)
        line.append(f"{listed} (of {calls})", style="red")
    elif any(s.fallback_ops is not None for s in evaluation.stages):
        line.append(f"none ({calls}; torch_neuronx.get_fallback_ops())", style="green")
    else:
        line.append(f"not tracked on {evaluation.device} ({calls})", style="dim")
    out.print(line)
    if verbose and counts:
        listed = ", ".join(f"{op} ×{n}" for op, n in counts.items())
        out.print(Text(f"  {listed}", style="dim"))


def _print_compilation(out: Console, evaluation: Evaluation) -> None:
    stage = evaluation.stage("compile")
    if stage is None:
        return
    for graph_break in stage.graph_breaks:
        out.print(Text(f"Graph break ×{graph_break.count}: {graph_break.reason}"))
    for failed in stage.failed_ops:
        out.print(Text(f"Fails to compile alone: {failed.op}: {failed.error}", style="red"))


def _print_footer(out: Console, evaluation: Evaluation) -> None:
    print_outcome(out, evaluation.problem, ok=evaluation.ok, summary=evaluation.summary)


def print_tracebacks(err: Console, evaluation: Evaluation) -> None:
    """With --debug: the traceback behind the entry's failure and behind each failed stage."""
    sources = [("entry", evaluation.traceback)] + [(s.name, s.traceback) for s in evaluation.stages]
    for name, trace in sources:
        if trace:
            err.print(Text(f"--- traceback ({name}) ---\n{trace.rstrip()}", style="dim"))


# --- formats (emit) -----------------------------------------------------------------------------


def _print(out: Console, evaluation: Evaluation, *, verbose: bool = False) -> None:
    print_evaluation(out, evaluation, verbose)


def _text(evaluation: Evaluation, *, verbose: bool = False) -> str:
    return plain_text(print_evaluation, evaluation, verbose)


def outcome(evaluation: Evaluation) -> Outcome:
    """The run's v1 status (pass, fail, fallback, timeout, error) and exit 0 when ok, else 1."""
    return Outcome(evaluation.status, EXIT_OK if evaluation.ok else EXIT_FAILED)


def _json(evaluation: Evaluation, **_: Any) -> str:
    doc = document(
        "evaluate", payload(evaluation), outcome(evaluation),
        errors=problem_errors(evaluation.problem),
    )  # fmt: skip
    return dumps(doc)


def _html(evaluation: Evaluation, **_: Any) -> str:
    return render(evaluation)


def _deliver(evaluation: Evaluation, text: str, output: Path | None) -> None:
    write_text(output, text)
    if output is not None:
        sys.stderr.write(f"Wrote {output}\n")


EVALUATION: Output[Evaluation, EvaluationFormat] = Output(
    Evaluation,
    EvaluationFormat,
    {
        EvaluationFormat.text: Format(_text, terminal=_print, deliver=_deliver),
        EvaluationFormat.json: Format(_json, deliver=_deliver),
        EvaluationFormat.html: Format(_html, deliver=_deliver),
    },
    outcome,
)
