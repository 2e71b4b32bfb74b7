"""``neuron-env evaluate``: the user's own model on the device, against the CPU.

neuron-env's side (this package) checks ENTRY, runs the worker (``worker/``) in the *target*
interpreter with a hard timeout per stage, and turns what it reports into an :class:`Evaluation`.
The worker needs only the standard library and torch there.

Library API::

    entry = parse_entry("my_model.py:make")
    evaluation = evaluate(Request(python, entry, device="neuron", compile=True))
    evaluation.ok, evaluation.summary, evaluation.stages, evaluation.advice
"""

from __future__ import annotations

import time
from dataclasses import replace

from neuron_env.evaluate.advice import advise
from neuron_env.evaluate.entry import Entry, parse_entry, parse_shapes
from neuron_env.evaluate.harness import Progress, ProgressCallback, Request, run_worker
from neuron_env.evaluate.models import (
    Evaluation,
    FailedOp,
    GraphBreak,
    ModelInfo,
    StageResult,
    TensorInfo,
)
from neuron_env.worker.devices import check_device, check_timeout

__all__ = [
    "Entry",
    "Evaluation",
    "FailedOp",
    "GraphBreak",
    "ModelInfo",
    "Progress",
    "ProgressCallback",
    "Request",
    "StageResult",
    "TensorInfo",
    "evaluate",
    "parse_entry",
    "parse_shapes",
]


def evaluate(
    request: Request,
    *,
    allow_fallback: bool = False,
    dynamic_shapes: str | None = None,
    progress: ProgressCallback | None = None,
) -> Evaluation:
    """Evaluate ``request.entry`` in ``request.python`` on ``request.device``.

    Never raises for what the target or the user's code does (no torch, no device, an entry that
    raises, a hang, a crash): those come back as ``problem`` or as stage statuses, and ``ok`` is
    False. Raises :class:`~neuron_env.errors.BadInput` for an unknown device or a timeout that
    is not a finite number of seconds above 0. ``dynamic_shapes``
    is the support matrix's text for that limitation, quoted in the advice about recompiles.
    """
    check_device(request.device)
    check_timeout(request.timeout)
    start = time.monotonic()
    run = run_worker(request, progress)
    evaluation = Evaluation(
        entry=request.entry.text,
        device=request.device,
        python=str(request.python),
        info=run.info,
        model=run.model,
        stages=tuple(run.stages or ()),
        problem=run.problem,
        traceback=run.traceback,
        allow_fallback=allow_fallback,
        compile=request.compile,
        wall_s=time.monotonic() - start,
    )
    return replace(evaluation, advice=advise(evaluation, dynamic_shapes))
