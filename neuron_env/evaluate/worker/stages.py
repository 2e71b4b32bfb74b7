"""The stages of an evaluation: the CPU reference, eager on the device, torch.compile on the
device, and the compiled forward at each of several input shapes.

Every stage starts from a fresh ``copy.deepcopy`` of the model the entry built (once, on the CPU,
after seeding torch), so all of them see the same weights and the same inputs.
"""

from __future__ import annotations

import copy
import statistics
import sys
from collections import Counter
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from ...worker.target.compare import verdict
from ...worker.target.device import Device
from ...worker.target.timing import timed
from . import graphs
from .entry import Spec, inputs_for
from .numerics import Snapshot, Upstream, compare_snapshots, make_step, snapshot
from .structures import call, flatten, to_device

SEED_TEXT = "neuron-env evaluate"


class Reference:
    """The CPU's results for the entry's inputs, and the upstream gradients both sides use."""

    def __init__(self, spec: Spec) -> None:
        self.spec = spec
        self.upstream = Upstream(SEED_TEXT, "cpu")
        model = copy.deepcopy(spec.model)
        step = make_step(model, spec, spec.inputs, spec.targets, self.upstream)
        self.seconds, (outputs, loss) = timed(step, lambda: None)
        self.snapshot = snapshot(model, outputs, loss)

    def upstream_on(self, device: Device) -> Upstream:
        moved = Upstream(SEED_TEXT, device.torch_device)
        if self.upstream.values is not None:
            moved.values = [v.to(device.torch_device) for v in self.upstream.values]
        return moved


def run_eager(device: Device, reference: Reference, repeats: int) -> dict[str, Any]:
    """The model on the device, eagerly: numerics, timings, and the ops it ran (with counts)."""
    spec = reference.spec
    model = copy.deepcopy(spec.model).to(device.torch_device)
    inputs, targets = _on(device, spec.inputs), _on(device, spec.targets)
    step = make_step(model, spec, inputs, targets, reference.upstream_on(device))
    device.clear_tracking()
    timings, got = _timed_steps(step, model, device, repeats)
    fallback = device.fallback_ops()
    with _OpCounter() as counter:
        step()
    comparisons = compare_snapshots(got, reference.snapshot, spec)
    return {
        "status": verdict(comparisons, fallback),
        "comparisons": comparisons,
        "fallback_ops": fallback,
        "op_counts": dict(sorted(counter.counts.items())),
        **timings,
    }


def run_compile(
    device: Device, reference: Reference, repeats: int, deadline: float
) -> dict[str, Any]:
    """``torch.compile(backend=..., dynamic=False)``: the first call (compilation) apart from the
    steady state, graphs and graph breaks, and the ops behind a failed compilation."""
    spec = reference.spec
    recorder = graphs.GraphRecorder(device.compile_backend)
    graphs.reset()
    model = copy.deepcopy(spec.model).to(device.torch_device)
    compiled = torch.compile(model, backend=recorder, dynamic=False)
    inputs, targets = _on(device, spec.inputs), _on(device, spec.targets)
    step = make_step(
        model, spec, inputs, targets, reference.upstream_on(device), call_with=compiled
    )
    device.clear_tracking()
    try:
        timings, got = _timed_steps(step, model, device, repeats)
    except Exception as exc:
        return _compile_failed(exc, recorder, device, deadline)
    comparisons = compare_snapshots(got, reference.snapshot, spec)
    fallback = device.fallback_ops()
    return {
        "status": verdict(comparisons, fallback),
        "comparisons": comparisons,
        "fallback_ops": fallback,
        "graphs": recorder.graphs,
        "graph_breaks": graphs.graph_breaks(),
        **timings,
    }


def _compile_failed(
    exc: Exception, recorder: graphs.GraphRecorder, device: Device, deadline: float
) -> dict[str, Any]:
    from ...worker.target.errors import innermost_message
    from .frames import describe_exception

    failed: list[dict[str, str]] = []
    complete = True
    if recorder.failed is None:  # compiled, then raised while running
        said = {"message": f"the compiled model raised {describe_exception(exc)}"}
    else:
        said = {}
        failed, complete = graphs.failing_ops(recorder.failed, recorder.inner, deadline)
    return {
        "status": "error",
        **said,
        "error": innermost_message(exc),
        "failed_ops": failed,
        "isolation_complete": complete,
        "graphs": recorder.graphs,
        "graph_breaks": graphs.graph_breaks(),
        "fallback_ops": device.fallback_ops(),
    }


class ShapeSweep:
    """The compiled forward at several input shapes, one graph cache for all: which shapes compiled
    a new graph, and what each first call cost."""

    def __init__(self, device: Device, spec: Spec, shapes: list[tuple[int, ...]]) -> None:
        self.device, self.spec = device, spec
        self.recorder = graphs.GraphRecorder(device.compile_backend)
        graphs.reset()
        self.model = copy.deepcopy(spec.model).to(device.torch_device)
        self.compiled = torch.compile(self.model, backend=self.recorder, dynamic=False)
        self.limit = len(shapes) + 8

    def run(self, shape: tuple[int, ...], seed: int, repeats: int) -> dict[str, Any]:
        inputs = inputs_for(self.spec, shape, seed)
        with torch.no_grad():
            expected = Snapshot(flatten(call(copy.deepcopy(self.spec.model), inputs)), None, {})
            on_device = _on(self.device, inputs)
            before = self.recorder.graphs
            self.device.clear_tracking()
            with graphs.recompile_limit(self.limit):
                first_s, outputs = timed(lambda: call(self.compiled, on_device), self._sync)
                times = [
                    timed(lambda: call(self.compiled, on_device), self._sync)[0]
                    for _ in range(repeats)
                ]
        got = Snapshot([(k, v.detach().cpu()) for k, v in flatten(outputs)], None, {})
        comparisons = compare_snapshots(got, expected, self.spec)
        fallback = self.device.fallback_ops()
        return {
            "status": verdict(comparisons, fallback),
            "comparisons": comparisons,
            "fallback_ops": fallback,
            "graphs_compiled": self.recorder.graphs - before,
            "first_call_s": first_s,
            "steady_s": statistics.median(times) if times else None,
            "repeats": len(times),
        }

    def _sync(self) -> None:
        self.device.synchronize()


def _on(device: Device, value: Any) -> Any:
    return to_device(value, device.torch_device)


def _timed_steps(
    step: Any, model: Any, device: Device, repeats: int
) -> tuple[dict[str, Any], Snapshot]:
    """The first call (timed, its results kept), then ``repeats`` more for the steady state."""
    first_s, (outputs, loss) = timed(step, device.synchronize)
    got = snapshot(model, outputs, loss)
    times = [timed(step, device.synchronize)[0] for _ in range(repeats)]
    return {
        "first_call_s": first_s,
        "steady_s": statistics.median(times) if times else None,
        "repeats": len(times),
    }, got


class _OpCounter(TorchDispatchMode):  # type: ignore[misc]
    """Counts every ATen op call (by name, e.g. ``aten::addmm``) while active.

    torch wraps a mode's ``__torch_dispatch__`` in ``torch._dynamo.disable``, which imports
    torch._dynamo at the first op: 1.5 s or more of an eager-only evaluation. Here that wrapping
    is applied only once torch._dynamo is loaded (before, nothing can be compiling), so an eager
    run never imports it, and a model that compiles inside its step still counts as before.
    """

    def __init__(self) -> None:
        super().__init__()
        self.counts: Counter[str] = Counter()
        self._outside_dynamo: Any = None

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False  # torch's own wrapping, replaced by the lazy one below

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        if "torch._dynamo" not in sys.modules:
            return self._count(func, args, kwargs)
        if self._outside_dynamo is None:
            self._outside_dynamo = torch._dynamo.disable(self._count, recursive=True)
        return self._outside_dynamo(func, args, kwargs)

    def _count(self, func: Any, args: Any, kwargs: Any) -> Any:
        self.counts[func._schema.name] += 1
        return func(*args, **(kwargs or {}))
