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

from ...worker.target.compare import compare
from ...worker.target.device import Device
from ...worker.target.errors import innermost_message
from ...worker.target.timing import first_and_steady, timed
from . import ops
from .cases import Case


def run_float64(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    """A float64 matmul, classified by the precision it actually has."""
    inputs = ops.make_inputs(case.inputs, torch.float64, f"{case.id}/{dtype_name}/{mode}")
    a, b = (inputs[k].to(device.torch_device) for k in ("a", "b"))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device.clear_tracking()
        timings, output = first_and_steady(lambda: a @ b, device.synchronize, repeats)
    warned = sorted({str(w.message).splitlines()[0] for w in caught})
    measured = {"fallback_ops": device.fallback_ops(), "warnings": warned, **timings}
    return {**measured, **_float64_verdict(case, output, inputs["a"] @ inputs["b"], warned)}


def _float64_verdict(case: Case, output: Any, expected: Any, warned: list[str]) -> dict[str, Any]:
    native, as_float32 = case.tolerances["fp64"], case.tolerances["fp32"]
    strict = compare("output", output, expected, native.rtol, native.atol)
    loose = compare("output", output, expected, as_float32.rtol, as_float32.atol)
    returned = "" if output.dtype == torch.float64 else f"; the result came back as {output.dtype}"
    if strict["ok"]:
        behaviour, status, shown = "float64 is computed natively", "pass", strict
    elif loose["ok"]:
        said = f" (warning: {warned[0]})" if warned else " (no warning was issued)"
        behaviour, status, shown = (
            "float64 is computed with float32 precision" + said,
            "unsupported",
            loose,
        )
    else:
        behaviour, status, shown = (
            "float64 results are wrong even at float32 precision",
            "fail",
            loose,
        )
    return {"status": status, "comparisons": [shown], "behaviour": behaviour + returned}


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
    """Compile for one shape, then call with another: count the graphs, time the new one."""
    first = ops.make_inputs(case.inputs, torch.float32, f"{case.id}/{dtype_name}/{mode}")["x"]
    second = torch.randn(*case.params["second_shape"], generator=torch.Generator().manual_seed(1))
    graphs: list[int] = []
    torch._dynamo.reset()
    program = torch.compile(
        _program, backend=_counting_backend(device.compile_backend, graphs), dynamic=False
    )
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
            f"output {tuple(x.shape)}", out, _program(x.double()), tolerance.rtol, tolerance.atol
        )
        for x, out in ((first, out_first), (second, out_second))
    ]
    return {
        "status": "pass" if all(c["ok"] for c in comparisons) else "fail",
        "behaviour": _recompile_seen(len(graphs), new_shape_s),
        "comparisons": comparisons,
        "fallback_ops": device.fallback_ops(),
        "metrics": {"graphs_compiled": len(graphs), "new_shape_first_call_s": new_shape_s},
        **timings,
    }


def _recompile_seen(graphs: int, new_shape_s: float) -> str:
    if graphs > 1:
        return f"the new shape compiled graph #{graphs}, first call {new_shape_s:.3g} s"
    return "the new shape reused the first graph (no recompile)"


def _counting_backend(name: str, graphs: list[int]) -> Any:
    from torch._dynamo.backends.registry import lookup_backend

    inner = lookup_backend(name)

    def counting(gm: Any, example_inputs: Any) -> Any:
        graphs.append(len(graphs) + 1)
        return inner(gm, example_inputs)

    return counting
