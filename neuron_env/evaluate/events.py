"""The evaluate worker's JSON events as result models, with a one-line message per stage."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from neuron_env.evaluate.models import FailedOp, GraphBreak, ModelInfo, StageResult, TensorInfo
from neuron_env.worker.events import comparison, comparison_line, number, runnable
from neuron_env.worker.results import STATUSES, Status


def model_info(event: dict[str, Any]) -> ModelInfo:
    return ModelInfo(
        name=str(event.get("name", "")),
        model_class=str(event.get("model_class", "")),
        source=str(event.get("source", "")),
        parameters=int(event.get("parameters") or 0),
        trainable=int(event.get("trainable") or 0),
        dtypes=tuple(str(d) for d in event.get("dtypes") or ()),
        inputs=tuple(
            TensorInfo(str(i["name"]), tuple(int(n) for n in i["shape"]), str(i["dtype"]))
            for i in event.get("inputs") or ()
        ),
        loss=bool(event.get("loss")),
        backward=bool(event.get("backward", True)),
        training=bool(event.get("training")),
        reference_s=number(event.get("reference_s")),
        warnings=tuple(str(w) for w in event.get("warnings") or ()),
    )


def stage_result(event: dict[str, Any], wall_s: float | None) -> StageResult:
    """A ``result`` event as a :class:`StageResult`, with its message."""
    status: Status = event["status"] if event.get("status") in STATUSES else "error"
    fallback = event.get("fallback_ops")
    graphs = event.get("graphs", event.get("graphs_compiled"))
    result = StageResult(
        name=str(event["name"]),
        status=status,
        comparisons=tuple(comparison(c) for c in event.get("comparisons") or ()),
        fallback_ops=tuple(fallback) if fallback is not None else None,
        op_counts={str(k): int(v) for k, v in (event.get("op_counts") or {}).items()},
        first_call_s=number(event.get("first_call_s")),
        steady_s=number(event.get("steady_s")),
        repeats=event.get("repeats"),
        graphs=int(graphs) if graphs is not None else None,
        graph_breaks=tuple(
            GraphBreak(str(b["reason"]), int(b["count"])) for b in event.get("graph_breaks") or ()
        ),
        error=event.get("error"),
        failed_ops=tuple(
            FailedOp(str(f["op"]), str(f["error"])) for f in event.get("failed_ops") or ()
        ),
        isolation_complete=bool(event.get("isolation_complete", True)),
        traceback=str(event.get("traceback") or ""),
        wall_s=wall_s,
    )
    return replace(result, message=runnable(str(event.get("message") or "")) or describe(result))


def describe(stage: StageResult) -> str:
    """One line saying what was measured."""
    if stage.status == "error" and stage.error is not None:
        return _compile_failure(stage)
    if stage.status == "fallback":
        return "correct, but fell back to CPU: " + _fallback_list(stage)
    failing = stage.failing_comparisons()
    if failing:  # outputs come first: the most telling
        more = f"; {len(failing) - 1} more tensor(s) off" if len(failing) > 1 else ""
        return comparison_line(failing[0], True) + more
    return _passed(stage)


def _passed(stage: StageResult) -> str:
    parts = []
    if stage.kind == "compile":
        parts.append(f"{_graphs(stage.graphs)}, {_breaks(stage.graph_breaks)}")
    elif stage.kind == "shape":
        parts.append("compiled a new graph" if stage.graphs else "reused a compiled graph")
    worst = stage.worst()
    if worst is not None:
        parts.append(f"worst {worst.tensor}: {comparison_line(worst, False)}")
    return "; ".join(parts)


def _graphs(count: int | None) -> str:
    return f"{count} graph" + ("" if count == 1 else "s")


def _breaks(breaks: Sequence[GraphBreak]) -> str:
    total = sum(b.count for b in breaks)
    return "no graph breaks" if not total else f"{total} graph break" + ("" if total == 1 else "s")


def _compile_failure(stage: StageResult) -> str:
    line = f"compilation failed: {stage.error}"
    if stage.failed_ops:
        line += "; fails alone: " + ", ".join(f.op for f in stage.failed_ops)
    return line


def _fallback_list(stage: StageResult) -> str:
    return ", ".join(_with_count(op, stage.op_counts) for op in stage.fallback_ops or ())


def _with_count(op: str, counts: dict[str, int]) -> str:
    return f"{op} ×{counts[op]}" if op in counts else op
