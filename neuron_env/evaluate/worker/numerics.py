"""One step of the user's model (forward, then backward) and its results against the CPU's.

Backward is ``loss_fn(outputs[, targets]).backward()`` when the entry gives a loss function, else
``torch.autograd.backward`` of the floating outputs with fixed random upstream gradients (the same
on both sides). Tolerances: the entry's (by tensor label glob, or by dtype), else per dtype.
"""

from __future__ import annotations

import fnmatch
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from ...worker.target.compare import compare
from .entry import Spec
from .structures import call, dtype_name, flatten

# The device against the CPU in the same dtype: both round, in a different order, through every
# layer of a model, so these are looser than the self-test's per-op tolerances against float64.
DEFAULT_TOLERANCES = {
    "fp32": (1e-3, 1e-3),
    "bf16": (3e-2, 3e-2),
    "fp16": (1e-2, 1e-2),
    "fp64": (1e-7, 1e-7),
}
FALLBACK_TOLERANCE = (1e-3, 1e-3)


class Upstream:
    """Fixed random gradients for the floating outputs, made on the CPU from a seed, so that the
    CPU and the device back-propagate the same values."""

    def __init__(self, seed_text: str, device: Any) -> None:
        self.seed = zlib.crc32(seed_text.encode())
        self.device = device
        self.values: list[Any] | None = None

    def __call__(self, tensors: list[Any]) -> list[Any]:
        if self.values is None:
            generator = torch.Generator().manual_seed(self.seed)
            self.values = [
                torch.randn(t.shape, generator=generator).to(t.dtype).to(self.device)
                for t in tensors
            ]
        return self.values


@dataclass
class Snapshot:
    """A step's results, copied to the CPU."""

    outputs: list[tuple[str, Any]]
    loss: Any
    grads: dict[str, Any]


def make_step(
    model: Any, spec: Spec, inputs: Any, targets: Any, upstream: Upstream, *, call_with: Any = None
) -> Callable[[], tuple[Any, Any]]:
    """Forward then backward; ``call_with`` is what to call (a compiled model), ``model`` owns the
    parameters whose gradients are reset."""
    parameters = list(model.parameters())
    target = call_with if call_with is not None else model

    def step() -> tuple[Any, Any]:
        for p in parameters:
            p.grad = None
        outputs = call(target, inputs)
        return outputs, _backward(outputs, spec, targets, upstream)

    return step


def _backward(outputs: Any, spec: Spec, targets: Any, upstream: Upstream) -> Any:
    if not spec.backward:
        return None
    if spec.loss_fn is not None:
        loss = spec.loss_fn(outputs) if targets is None else spec.loss_fn(outputs, targets)
        loss.backward()
        return loss
    tensors = differentiable(outputs)
    if tensors:
        torch.autograd.backward(tensors, upstream(tensors))
    return None


def differentiable(outputs: Any) -> list[Any]:
    return [t for _, t in flatten(outputs) if t.is_floating_point() and t.requires_grad]


def snapshot(model: Any, outputs: Any, loss: Any) -> Snapshot:
    return Snapshot(
        outputs=[(label, _cpu(t)) for label, t in flatten(outputs)],
        loss=_cpu(loss) if isinstance(loss, torch.Tensor) else None,
        grads={
            name: _cpu(p.grad) if p.grad is not None else None
            for name, p in model.named_parameters()
            if p.requires_grad
        },
    )


def _cpu(tensor: Any) -> Any:
    return tensor.detach().to("cpu").clone()


def compare_snapshots(got: Snapshot, want: Snapshot, spec: Spec) -> list[dict[str, Any]]:
    """Outputs, then the loss, then each parameter's gradient."""
    results = _compare_outputs(got.outputs, want.outputs, spec)
    if want.loss is not None:
        results.append(_compare("loss", got.loss, want.loss, spec))
    for name, expected in want.grads.items():
        actual = got.grads.get(name)
        if expected is None:
            continue
        if actual is None:
            results.append(_problem(f"grad {name}", "no gradient on the device", expected))
        else:
            results.append(_compare(f"grad {name}", actual, expected, spec))
    return results


def _compare_outputs(
    got: list[tuple[str, Any]], want: list[tuple[str, Any]], spec: Spec
) -> list[dict[str, Any]]:
    actual = dict(got)
    results = []
    for label, expected in want:
        if label in actual:
            results.append(_compare(label, actual[label], expected, spec))
        else:
            results.append(_problem(label, "missing from the device's outputs", expected))
    return results


def _compare(label: str, actual: Any, expected: Any, spec: Spec) -> dict[str, Any]:
    if actual is None:
        return _problem(label, "missing on the device", expected)
    if not expected.is_floating_point():  # integers, booleans: exact
        return compare(label, actual, expected, 0.0, 0.0)
    rtol, atol = tolerance_for(label, expected.dtype, spec.tolerances)
    return compare(label, actual, expected, rtol, atol)


def _problem(label: str, problem: str, expected: Any) -> dict[str, Any]:
    total = expected.numel()
    return {"tensor": label, "ok": False, "problem": problem, "mismatched": total, "total": total}


def tolerance_for(
    label: str, dtype: Any, overrides: dict[str, tuple[float, float]]
) -> tuple[float, float]:
    """The entry's tolerance for a label glob (first match), else for the dtype, else default."""
    for pattern, tolerance in overrides.items():
        if fnmatch.fnmatchcase(label, pattern):
            return tolerance
    name = dtype_name(dtype)
    return overrides.get(name) or DEFAULT_TOLERANCES.get(name, FALLBACK_TOLERANCE)
