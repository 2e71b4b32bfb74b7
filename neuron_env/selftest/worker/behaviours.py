"""TorchNeuron's documented beta behaviours, checked explicitly and reported as such.

* float64 is computed as float32 (with a warning) — ``unsupported`` by design, not a failure;
* ``torch.compile(dynamic=True)`` is rejected — ``unsupported`` by design;
* a new input shape under ``dynamic=False`` compiles a new graph — reported with its cost.

On devices without these limits (CPU, CUDA) the same cases pass and say what they observed.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

from . import ops
from .cases import Case
from .compare import compare
from .device import Device
from .timing import first_and_steady, timed


def run_float64(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    name = f"{case.id}/{dtype_name}/{mode}"
    inputs = ops.make_inputs(case.inputs, torch.float64, name)
    expected = inputs["a"] @ inputs["b"]
    a, b = (inputs[k].to(device.torch_device) for k in ("a", "b"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device.clear_tracking()
        timings, output = first_and_steady(lambda: a @ b, device.synchronize, repeats)
    native = case.tolerances["fp64"]
    as_float32 = case.tolerances["fp32"]
    strict = compare("output", output, expected, native.rtol, native.atol)
    loose = compare("output", output, expected, as_float32.rtol, as_float32.atol)
    warned = sorted({str(w.message).splitlines()[0] for w in caught})
    result: dict[str, Any] = {"fallback_ops": device.fallback_ops(), "warnings": warned, **timings}
    dtype_note = (
        "" if output.dtype == torch.float64 else f"; the result came back as {output.dtype}"
    )
    if strict["ok"]:
        return {
            **result,
            "status": "pass",
            "comparisons": [strict],
            "behaviour": "float64 is computed natively" + dtype_note,
        }
    if loose["ok"]:
        said = f" (warning: {warned[0]})" if warned else " (no warning was issued)"
        return {
            **result,
            "status": "unsupported",
            "comparisons": [loose],
            "behaviour": "float64 is computed with float32 precision" + said + dtype_note,
        }
    return {
        **result,
        "status": "fail",
        "comparisons": [loose],
        "behaviour": "float64 results are wrong even at float32 precision",
    }


def _program(x: Any) -> Any:
    return torch.tanh(x) * 2 + 1


def run_dynamic(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    name = f"{case.id}/{dtype_name}/{mode}"
    x = ops.make_inputs(case.inputs, torch.float32, name)["x"]
    torch._dynamo.reset()
    program = torch.compile(_program, backend=device.compile_backend, dynamic=True)
    device_x = x.to(device.torch_device)
    device.clear_tracking()
    try:
        first_s, output = timed(lambda: program(device_x), device.synchronize)
    except Exception as exc:
        return {
            "status": "unsupported",
            "behaviour": f"torch.compile(dynamic=True) is rejected: {innermost_message(exc)}",
            "fallback_ops": device.fallback_ops(),
        }
    tolerance = case.tolerances[dtype_name]
    comparison = compare("output", output, _program(x.double()), tolerance.rtol, tolerance.atol)
    ok = comparison["ok"]
    return {
        "status": "pass" if ok else "fail",
        "behaviour": "torch.compile(dynamic=True) is accepted",
        "comparisons": [comparison],
        "fallback_ops": device.fallback_ops(),
        "first_call_s": first_s,
    }


def run_recompile(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    name = f"{case.id}/{dtype_name}/{mode}"
    first = ops.make_inputs(case.inputs, torch.float32, name)["x"]
    second = torch.randn(*case.params["second_shape"], generator=torch.Generator().manual_seed(1))
    graphs: list[int] = []
    backend = _counting_backend(device.compile_backend, graphs)
    torch._dynamo.reset()
    program = torch.compile(_program, backend=backend, dynamic=False)
    device.clear_tracking()
    timings, out_first = first_and_steady(
        lambda: program(first.to(device.torch_device)), device.synchronize, repeats
    )
    new_shape_s, out_second = timed(
        lambda: program(second.to(device.torch_device)), device.synchronize
    )
    tolerance = case.tolerances[dtype_name]
    comparisons = [
        compare(
            f"output {tuple(first.shape)}",
            out_first,
            _program(first.double()),
            tolerance.rtol,
            tolerance.atol,
        ),
        compare(
            f"output {tuple(second.shape)}",
            out_second,
            _program(second.double()),
            tolerance.rtol,
            tolerance.atol,
        ),
    ]
    if len(graphs) > 1:
        seen = f"the new shape compiled graph #{len(graphs)}, first call {new_shape_s:.3g} s"
    else:
        seen = "the new shape reused the first graph (no recompile)"
    return {
        "status": "pass" if all(c["ok"] for c in comparisons) else "fail",
        "behaviour": seen,
        "comparisons": comparisons,
        "fallback_ops": device.fallback_ops(),
        "metrics": {"graphs_compiled": len(graphs), "new_shape_first_call_s": new_shape_s},
        **timings,
    }


def _counting_backend(name: str, graphs: list[int]) -> Any:
    from torch._dynamo.backends.registry import lookup_backend

    inner = lookup_backend(name)

    def counting(gm: Any, example_inputs: Any) -> Any:
        graphs.append(len(graphs) + 1)
        return inner(gm, example_inputs)

    return counting


def innermost_message(exc: BaseException) -> str:
    """The first line of the root cause: dynamo wraps a backend's error in its own."""
    while True:
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        if inner is None or inner is exc:
            break
        exc = inner
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
