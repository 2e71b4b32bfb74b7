"""An evaluation as one self-contained HTML page (:mod:`neuron_env.output.html_page`'s style):
tables, and an inline SVG chart of first-call (compile) against steady-state times. No
JavaScript, no external resources; every string that came from the user or the target is
escaped."""

from __future__ import annotations

import math
from collections.abc import Sequence

from neuron_env.evaluate.models import Evaluation, StageResult
from neuron_env.output.html_page import esc, page, pairs, section, status, table, verdict
from neuron_env.wording import seconds
from neuron_env.worker.results import Comparison

FIRST, STEADY = "#d97706", "#2563eb"
CHART_WIDTH, LABEL_WIDTH, VALUE_WIDTH, ROW = 760, 190, 80, 22


def render(evaluation: Evaluation) -> str:
    """The whole page."""
    name = evaluation.model.name if evaluation.model is not None else evaluation.entry
    return page(
        f"neuron-env evaluate: {name}",
        verdict(evaluation.ok, evaluation.summary),
        *_sections(evaluation),
    )


def _sections(evaluation: Evaluation) -> list[str]:
    parts = [section("Environment", _environment(evaluation))]
    if evaluation.problem is not None:
        problem = evaluation.problem
        parts.append(section("Problem", f"<p>{esc(problem.message)}</p><p>{esc(problem.hint)}</p>"))
    if evaluation.model is not None:
        parts.append(section("Model", _model(evaluation)))
    if evaluation.stages:
        parts.append(section("Stages", _stages(evaluation.stages)))
        parts.append(section("First call and steady state", chart(evaluation.stages)))
        parts.append(section("Numerics against the CPU", _numerics(evaluation.stages)))
        parts.append(section("Ops", _ops(evaluation)))
    compiled = evaluation.stage("compile")
    if compiled is not None:
        parts.append(section("Compilation", _compilation(compiled)))
    if evaluation.advice:
        items = "".join(f"<li>{esc(line)}</li>" for line in evaluation.advice)
        parts.append(section("Advice", f"<ul>{items}</ul>"))
    return parts


def _environment(evaluation: Evaluation) -> str:
    rows: list[tuple[str, object]] = [("Entry", evaluation.entry), ("Device", evaluation.device)]
    info = evaluation.info
    if info is not None:
        rows += [
            ("Device name", f"{info.name or '—'} ({info.count} device(s))"),
            ("torch", info.torch),
            ("torch-neuronx", info.torch_neuronx or "not installed"),
            ("Python", f"{info.python} ({info.executable})"),
            ("Compile backend", info.compile_backend or "—"),
        ]
    else:
        rows.append(("Python", evaluation.python))
    return pairs(rows)


def _model(evaluation: Evaluation) -> str:
    model = evaluation.model
    assert model is not None
    inputs = ", ".join(f"{i.name} {'×'.join(map(str, i.shape))} {i.dtype}" for i in model.inputs)
    backward = (
        "none (backward = False)"
        if not model.backward
        else "loss_fn(outputs[, targets]).backward()"
        if model.loss
        else "fixed random gradients of the outputs (no loss_fn)"
    )
    return pairs(
        [
            ("Name", model.name),
            ("Class", model.model_class),
            ("Defined by", model.source),
            ("Parameters", f"{model.parameters:,} ({model.trainable:,} trainable)"),
            ("Parameter dtypes", ", ".join(model.dtypes) or "—"),
            ("Inputs", inputs or "—"),
            ("Backward", backward),
            ("Mode", "training" if model.training else "eval"),
        ]
    )


def _stages(stages: Sequence[StageResult]) -> str:
    rows = [
        (
            s.name,
            status(s.status),
            s.message,
            seconds(s.first_call_s),
            seconds(s.steady_s),
            "—" if s.graphs is None else s.graphs,
        )
        for s in stages
    ]
    return table(("Stage", "Status", "Measured", "First call", "Steady", "Graphs"), rows, (3, 4, 5))


def _numerics(stages: Sequence[StageResult]) -> str:
    rows = [_comparison_row(s.name, c) for s in stages for c in s.comparisons]
    if not rows:
        return '<p class="muted">Nothing was compared.</p>'
    headers = ("Stage", "Tensor", "Result", "Off", "Max abs", "Max rel", "rtol", "atol", "Used")
    return table(headers, rows, (3, 4, 5, 6, 7, 8))


def _comparison_row(stage: str, c: Comparison) -> tuple[object, ...]:
    result = status("pass" if c.ok else "fail")
    if c.problem:
        return (stage, c.tensor, result, c.problem, "—", "—", "—", "—", "—")
    return (
        stage,
        c.tensor,
        result,
        f"{c.mismatched}/{c.total}",
        _figure(c.max_abs),
        _figure(c.max_rel),
        _figure(c.rtol),
        _figure(c.atol),
        "—" if c.used is None else f"{c.used:.0%}",
    )


def _figure(value: float | None) -> str:
    return "—" if value is None else f"{value:.2e}"


def _ops(evaluation: Evaluation) -> str:
    fallback = set(evaluation.fallback_ops)
    eager = evaluation.stage("eager")
    counts = eager.op_counts if eager is not None else {}
    tracked = any(s.fallback_ops is not None for s in evaluation.stages)
    note = (
        f"Fell back to CPU: {', '.join(sorted(fallback))}."
        if fallback
        else "No op fell back to CPU."
        if tracked
        else f"CPU fallback is not tracked on {evaluation.device} (only torch_neuronx reports it)."
    )
    rows: list[tuple[object, ...]] = [
        (op, n, status("fallback") if op in fallback else "device") for op, n in counts.items()
    ]
    rows += [(op, "—", status("fallback")) for op in sorted(fallback - set(counts))]
    caption = '<p class="muted">ATen ops of one eager step (forward and backward), with calls.</p>'
    return f"<p>{esc(note)}</p>\n{caption}\n" + table(("Op", "Calls", "Ran on"), rows, (1,))


def _compilation(stage: StageResult) -> str:
    parts = [f"<p>{esc(stage.message)}</p>"]
    if stage.graph_breaks:
        breaks = [(b.reason, b.count) for b in stage.graph_breaks]
        parts.append("<h3>Graph breaks</h3>\n" + table(("Reason", "Count"), breaks, (1,)))
    if stage.failed_ops:
        failed = [(f.op, f.error) for f in stage.failed_ops]
        parts.append("<h3>Ops that fail to compile alone</h3>\n" + table(("Op", "Error"), failed))
    return "\n".join(parts)


def chart(stages: Sequence[StageResult]) -> str:
    """Horizontal bars, first call against steady state per stage, on a log scale (compilation
    can take a thousand times longer than a step)."""
    bars = [
        (s.name, label, value, colour)
        for s in stages
        for label, value, colour in (
            ("first call", s.first_call_s, FIRST),
            ("steady", s.steady_s, STEADY),
        )
        if value is not None and value > 0
    ]
    if not bars:
        return '<p class="muted">No timings were measured.</p>'
    low, high = _decades([b[2] for b in bars])
    height = ROW * len(bars) + 48
    parts = [
        f'<svg width="{CHART_WIDTH}" height="{height}" '
        f'role="img" aria-label="First call and steady-state time per stage (log scale)">',
        *_axis(low, high, ROW * len(bars)),
        *(_bar(i, bar, low, high) for i, bar in enumerate(bars)),
        _legend(ROW * len(bars) + 30),
        "</svg>",
    ]
    return "\n".join(parts)


def _decades(values: list[float]) -> tuple[float, float]:
    low = 10 ** math.floor(math.log10(min(values)))
    high = 10 ** math.ceil(math.log10(max(values)))
    return low, high if high > low else low * 10


def _x(value: float, low: float, high: float) -> float:
    span = CHART_WIDTH - LABEL_WIDTH - VALUE_WIDTH
    return LABEL_WIDTH + span * math.log10(value / low) / math.log10(high / low)


def _axis(low: float, high: float, bottom: int) -> list[str]:
    ticks = []
    value = low
    while value <= high * 1.0001:
        x = _x(value, low, high)
        ticks.append(
            f'<line x1="{x:.1f}" y1="0" x2="{x:.1f}" y2="{bottom}" stroke="#e5e7eb"/>'
            f'<text x="{x:.1f}" y="{bottom + 14}" text-anchor="middle">{_tick(value)}</text>'
        )
        value *= 10
    return ticks


def _tick(value: float) -> str:
    """Decades as ``100 µs``, ``1 ms``, ``10 s``."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if value >= scale * 0.999:
            return f"{value / scale:g} {unit}"
    return f"{value:g} s"


def _bar(index: int, bar: tuple[str, str, float, str], low: float, high: float) -> str:
    stage, label, value, colour = bar
    y = index * ROW
    end = max(_x(value, low, high), LABEL_WIDTH + 2)
    text = f"{stage} {label}"
    return (
        f'<text x="{LABEL_WIDTH - 8}" y="{y + 15}" text-anchor="end">{esc(text)}</text>'
        f'<rect x="{LABEL_WIDTH}" y="{y + 4}" width="{end - LABEL_WIDTH:.1f}" height="{ROW - 8}" '
        f'fill="{colour}"><title>{esc(text)}: {esc(seconds(value))}</title></rect>'
        f'<text x="{end + 6:.1f}" y="{y + 15}">{esc(seconds(value))}</text>'
    )


def _legend(y: int) -> str:
    return (
        f'<rect x="{LABEL_WIDTH}" y="{y}" width="12" height="12" fill="{FIRST}"/>'
        f'<text x="{LABEL_WIDTH + 18}" y="{y + 10}">first call (includes compilation)</text>'
        f'<rect x="{LABEL_WIDTH + 250}" y="{y}" width="12" height="12" fill="{STEADY}"/>'
        f'<text x="{LABEL_WIDTH + 268}" y="{y + 10}">steady state (median of the repeats)</text>'
    )
