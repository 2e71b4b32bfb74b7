"""The worker's main loop: read the request, check the device, run each variant, report."""

from __future__ import annotations

import traceback
from typing import Any

from ...worker.target import protocol
from ...worker.target.errors import require_torch
from ...worker.target.protocol import emit
from .cases import split_variant

DEFAULT_REPEATS = 5


def main(argv: list[str]) -> int:
    protocol.open_channel()
    if argv[:1] == ["--rank"]:
        require_torch()
        from .distributed import rank_main

        return rank_main(argv[1:])
    started = protocol.start(lambda request: request["variants"])
    if started is None:
        return 3
    device, request = started
    for name in request["variants"]:
        emit("start", name=name)
        emit("result", name=name, **run_variant(device, name, request))
    emit("done")
    return 0


def run_variant(device: Any, name: str, request: dict[str, Any]) -> dict[str, Any]:
    """One variant's result; an exception becomes status ``error`` with its message."""
    from ...worker.target.errors import innermost_message

    try:
        case, dtype, mode = split_variant(name)
        runner = _runner(case.kind, case.op)
        timeout = float(request.get("case_timeout", 300)) * 0.8  # before neuron-env gives up
        repeats = int(request.get("repeats", DEFAULT_REPEATS))
        limit = timeout if case.kind == "collective" else repeats
        return dict(runner(device, case, dtype, mode, limit))
    except Exception as exc:
        traceback.print_exc()
        return {"status": "error", "message": f"{type(exc).__name__}: {innermost_message(exc)}"}


def _runner(kind: str, op: str) -> Any:
    from . import behaviours, distributed, perf, runner, training

    special = {
        "float64": behaviours.run_float64,
        "dynamic_shapes": behaviours.run_dynamic,
        "recompile": behaviours.run_recompile,
        "allreduce": distributed.run_allreduce,
        "matmul_throughput": perf.run_matmul_throughput,
        "copy_bandwidth": perf.run_copy_bandwidth,
    }
    if op in special:
        return special[op]
    return training.run_training if kind == "training" else runner.run_op
