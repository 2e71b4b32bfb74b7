"""Running one variant of an ``op`` or ``training`` case: device vs float64 CPU reference."""

from __future__ import annotations

import zlib
from typing import Any

import torch

from ...worker.target.compare import compare, verdict
from ...worker.target.device import Device
from ...worker.target.timing import first_and_steady
from . import ops
from .cases import Case, Tolerance


def compiled(fn: Any, device: Device, mode: str) -> Any:
    if mode == "eager":
        return fn
    torch._dynamo.reset()  # so the first call compiles (and is timed as such)
    return torch.compile(fn, backend=device.compile_backend, dynamic=False)


def run_op(device: Device, case: Case, dtype_name: str, mode: str, repeats: int) -> dict[str, Any]:
    name = f"{case.id}/{dtype_name}/{mode}"
    dtype = ops.DTYPES[dtype_name]
    tolerance = case.tolerances[dtype_name]
    fn = ops.OPS[case.op]
    inputs = ops.make_inputs(case.inputs, dtype, name)
    grads = {s.name for s in case.inputs if s.grad and case.backward}
    expected, expected_grads, upstream = _reference(fn, inputs, grads, dtype, name)
    leaves = {k: _leaf(v.to(device.torch_device), k in grads) for k, v in inputs.items()}
    device_upstream = [g.to(dtype).to(device.torch_device) for g in upstream]
    call = compiled(fn, device, mode)

    def step() -> tuple[Any, ...]:
        for leaf in leaves.values():
            leaf.grad = None
        outputs = ops.as_tuple(call(**leaves))
        if grads:
            torch.autograd.backward(_floating(outputs), device_upstream)
        return outputs

    device.clear_tracking()
    timings, outputs = first_and_steady(step, device.synchronize, repeats)
    fallback = device.fallback_ops()
    comparisons = _compare_outputs(outputs, expected, tolerance)
    for key in sorted(grads):
        got = leaves[key].grad
        comparisons.append(_compare_grad(key, got, expected_grads[key], tolerance))
    return {
        "status": verdict(comparisons, fallback),
        "comparisons": comparisons,
        "fallback_ops": fallback,
        **timings,
    }


def _leaf(tensor: Any, requires_grad: bool) -> Any:
    tensor = tensor.detach()
    return tensor.requires_grad_() if requires_grad else tensor


def _floating(outputs: tuple[Any, ...]) -> list[Any]:
    return [o for o in outputs if o.is_floating_point()]


def _reference(fn: Any, inputs: dict[str, Any], grads: set[str], dtype: Any, seed_text: str) -> Any:
    """Outputs and gradients in float64 on the CPU, from the same (dtype-rounded) inputs and
    upstream gradients."""
    leaves = {k: _leaf(_upcast(v), k in grads) for k, v in inputs.items()}
    outputs = ops.as_tuple(fn(**leaves))
    generator = torch.Generator().manual_seed(zlib.crc32(("upstream " + seed_text).encode()))
    upstream = [
        torch.randn(o.shape, generator=generator).to(dtype).double() for o in _floating(outputs)
    ]
    if grads:
        torch.autograd.backward(_floating(outputs), upstream)
    expected_grads = {k: leaves[k].grad for k in grads}
    return [o.detach() for o in outputs], expected_grads, upstream


def _upcast(tensor: Any) -> Any:
    return tensor.double() if tensor.is_floating_point() else tensor


def _compare_outputs(outputs: Any, expected: Any, tolerance: Tolerance) -> list[dict[str, Any]]:
    results = []
    for position, (got, want) in enumerate(zip(outputs, expected, strict=True)):
        label = "output" if len(expected) == 1 else f"output[{position}]"
        exact = not want.is_floating_point()
        rtol, atol = (0.0, 0.0) if exact else (tolerance.rtol, tolerance.atol)
        results.append(compare(label, got, want, rtol, atol))
    return results


def _compare_grad(key: str, got: Any, want: Any, tolerance: Tolerance) -> dict[str, Any]:
    if got is None:
        label = f"grad {key}"
        return {"tensor": label, "ok": False, "problem": "no gradient", "mismatched": 0, "total": 0}
    return compare(f"grad {key}", got, want, tolerance.rtol, tolerance.atol)
