"""The evaluate worker's main line: read the request, check the device, load the user's entry,
run the stages, report each as it finishes.

Events (JSON lines, ``worker/target/protocol.py``): ``hello`` (device), ``fatal`` (no torch, no
device, or ``kind: "entry"`` when the user's entry failed), ``start``/``result`` per stage
(``load``, ``eager``, ``compile``, ``shape AxB``), ``model`` (what the entry returned), ``done``.
"""

from __future__ import annotations

import functools
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from ...worker.target import protocol
from ...worker.target.protocol import emit
from .frames import describe_exception

DEFAULT_REPEATS = 5
ISOLATION_SHARE = 0.5  # of the stage timeout, for finding the ops that made compilation fail


def main(argv: list[str]) -> int:
    protocol.open_channel()
    started = protocol.start(lambda request: request["entry"]["text"])
    if started is None:
        return 3
    device, request = started
    sys.path[:0] = [str(p) for p in request.get("sys_path") or ()]
    return _evaluate(device, request)


def _evaluate(device: Any, request: dict[str, Any]) -> int:
    from . import stages
    from .entry import EntryError

    emit("start", name="load")
    try:
        reference = _load(request)
    except EntryError as err:
        emit("fatal", kind="entry", message=err.message, hint=err.hint, traceback=err.trace)
        return 4
    emit("model", **_describe(reference))
    repeats = int(request.get("repeats", DEFAULT_REPEATS))
    _stage("eager", lambda: stages.run_eager(device, reference, repeats))
    if request.get("compile"):
        budget = float(request.get("stage_timeout", 600)) * ISOLATION_SHARE
        _stage(
            "compile",
            lambda: stages.run_compile(device, reference, repeats, time.monotonic() + budget),
        )
        _shapes(device, reference, request, repeats)
    emit("done")
    return 0


def _load(request: dict[str, Any]) -> Any:
    from . import stages
    from .entry import EntryError, load

    spec = load(request["entry"], int(request.get("seed", 0)))
    try:
        return stages.Reference(spec)
    except Exception as exc:
        raise EntryError(
            f"The model raised on the CPU (the reference run): {describe_exception(exc)}",
            "Fix the model or its inputs; run with --debug to see the traceback.",
            traceback.format_exc(),
        ) from None


def _shapes(device: Any, reference: Any, request: dict[str, Any], repeats: int) -> None:
    from . import stages

    spec = reference.spec
    shapes = [tuple(s) for s in request.get("shapes") or ()] or spec.shapes
    if not shapes:
        return
    if spec.inputs_for is None:
        emit("start", name="shapes")
        emit("result", name="shapes", status="error", message=_NO_FACTORY)
        return
    sweep = stages.ShapeSweep(device, spec, shapes)
    seed = int(request.get("seed", 0))
    for shape in shapes:
        _stage(shape_name(shape), functools.partial(sweep.run, shape, seed, repeats))


_NO_FACTORY = (
    "--shapes needs the entry to give inputs_for(shape), a function that makes the inputs for "
    "one shape (see 'neuron-env evaluate --help')."
)


def shape_name(shape: tuple[int, ...]) -> str:
    return "shape " + "x".join(str(n) for n in shape)


def _stage(name: str, run: Callable[[], dict[str, Any]]) -> None:
    """Run one stage and report it; an exception becomes status ``error`` with where it came
    from in the user's code."""
    from .entry import EntryError

    emit("start", name=name)
    try:
        result = run()
    except EntryError as err:
        result = {"status": "error", "message": err.message, "traceback": err.trace}
    except Exception as exc:
        traceback.print_exc()
        result = {
            "status": "error",
            "message": describe_exception(exc),
            "traceback": traceback.format_exc(),
        }
    emit("result", name=name, **result)


def _describe(reference: Any) -> dict[str, Any]:
    from .structures import describe_inputs, dtype_name

    spec = reference.spec
    model = spec.model
    parameters = list(model.parameters())
    return {
        "name": spec.name,
        "model_class": _class_name(model),
        "source": spec.source,
        "parameters": sum(p.numel() for p in parameters),
        "trainable": sum(p.numel() for p in parameters if p.requires_grad),
        "dtypes": sorted({dtype_name(p.dtype) for p in parameters}),
        "inputs": describe_inputs(model, spec.inputs),
        "loss": spec.loss_fn is not None,
        "backward": spec.backward,
        "training": bool(model.training),
        "reference_s": reference.seconds,
        "warnings": _warnings(model),
    }


def _class_name(model: Any) -> str:
    """``torch.nn.modules.linear.Linear``; a class from the entry's file by its name alone."""
    from .entry import USER_MODULE

    cls = type(model)
    return (
        cls.__qualname__
        if cls.__module__ == USER_MODULE
        else f"{cls.__module__}.{cls.__qualname__}"
    )


def _warnings(model: Any) -> list[str]:
    import torch

    dropout = [
        name
        for name, m in model.named_modules()
        if isinstance(m, torch.nn.modules.dropout._DropoutNd) and m.p > 0
    ]
    if model.training and dropout:
        return [
            f"dropout is active in training mode ({', '.join(dropout[:3])}): the CPU and the "
            "device draw different random numbers, so outputs differ; return model.eval() from "
            "the entry, or dropout p=0"
        ]
    return []
