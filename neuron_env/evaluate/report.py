"""An evaluation as the JSON document's fields (layout only; the CLI adds the envelope)."""

from __future__ import annotations

import dataclasses
from typing import Any

from neuron_env.evaluate.models import Evaluation, StageResult
from neuron_env.serialize import to_jsonable
from neuron_env.worker.events import finite


def payload(evaluation: Evaluation) -> dict[str, Any]:
    """The ``neuron-env/evaluate/v1`` document (tracebacks stay out: ``--debug`` prints them)."""
    return {
        "ok": evaluation.ok,
        "status": evaluation.status,
        "summary": evaluation.summary,
        "details": evaluation.details,
        "entry": evaluation.entry,
        "device": evaluation.device,
        "python": evaluation.python,
        "info": to_jsonable(evaluation.info),
        "model": to_jsonable(evaluation.model),
        "problem": to_jsonable(evaluation.problem),
        "allow_fallback": evaluation.allow_fallback,
        "compile": evaluation.compile,
        "fallback_ops": evaluation.fallback_ops,
        "recompiles": evaluation.recompiles,
        "advice": list(evaluation.advice),
        "wall_s": evaluation.wall_s,
        "stages": [stage_payload(s) for s in evaluation.stages],
    }


def stage_payload(stage: StageResult) -> dict[str, Any]:
    fields = finite(to_jsonable(dataclasses.asdict(stage)))
    del fields["traceback"]
    return {**fields, "kind": stage.kind, "fallback_tracked": stage.fallback_ops is not None}
