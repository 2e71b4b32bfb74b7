"""Sustained throughput: matmul TFLOP/s and copy GB/s, in rounds, each round checked for
correctness (instability on a sick device shows up as wrong results or errors under load)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import torch

from ...worker.target.compare import compare
from ...worker.target.device import Device
from . import ops
from .cases import Case

CHECK_ROWS = 16  # rows of the matmul checked against float64 on the CPU each round


def _param(case: Case, key: str, device: Device) -> Any:
    value = case.params[key]
    return value.get(device.type, value.get("cpu")) if isinstance(value, dict) else value


def _rounds(
    work: Callable[[], None], sync: Callable[[], None], seconds: float, rounds: int
) -> list[tuple[int, float]]:
    """Each round repeats ``work`` for about ``seconds``; (iterations, elapsed) per round."""
    sync()
    start = time.perf_counter()
    work()
    sync()
    once = max(time.perf_counter() - start, 1e-6)
    iterations = max(1, int(seconds / once))
    results = []
    for _ in range(rounds):
        sync()
        start = time.perf_counter()
        for _ in range(iterations):
            work()
        sync()
        results.append((iterations, time.perf_counter() - start))
    return results


def _summary(rates: list[float], unit: str) -> dict[str, Any]:
    median = statistics.median(rates)
    return {
        unit: median,
        f"{unit}_min": min(rates),
        f"{unit}_max": max(rates),
        "spread": (max(rates) - min(rates)) / median if median else 0.0,
        "rounds": len(rates),
    }


def run_matmul_throughput(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    n = int(_param(case, "n", device))
    dtype = ops.DTYPES[dtype_name]
    inputs = ops.make_inputs(case.inputs or _square(n), dtype, f"{case.id}/{dtype_name}")
    a, b = (inputs[k].to(device.torch_device) for k in ("a", "b"))
    expected = inputs["a"][:CHECK_ROWS].double() @ inputs["b"].double()
    tolerance = case.tolerances[dtype_name]
    holder: dict[str, Any] = {}

    def work() -> None:
        holder["c"] = a @ b

    comparisons, rates = [], []
    device.clear_tracking()
    for iterations, elapsed in _rounds(
        work, device.synchronize, _param(case, "seconds", device), int(case.params["rounds"])
    ):
        rates.append(2 * n**3 * iterations / elapsed / 1e12)
        comparisons.append(
            compare(
                f"round {len(rates)} rows 0-{CHECK_ROWS - 1}",
                holder["c"][:CHECK_ROWS],
                expected,
                tolerance.rtol,
                tolerance.atol,
            )
        )
    return _perf_result(comparisons, rates, "tflops", device, {"n": n})


def _square(n: int) -> tuple[Any, ...]:
    from .cases import Input

    return (Input("a", (n, n)), Input("b", (n, n)))


def run_copy_bandwidth(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    mib = int(_param(case, "mib", device))
    source = torch.randn(mib * 2**20 // 4, generator=torch.Generator().manual_seed(0))
    src = source.to(device.torch_device)
    dst = torch.empty_like(src)
    comparisons, rates = [], []
    device.clear_tracking()
    for iterations, elapsed in _rounds(
        lambda: dst.copy_(src),
        device.synchronize,
        _param(case, "seconds", device),
        int(case.params["rounds"]),
    ):
        rates.append(2 * src.numel() * 4 * iterations / elapsed / 1e9)
        comparisons.append(compare(f"round {len(rates)}", dst, source, 0.0, 0.0))
    return _perf_result(comparisons, rates, "gbps", device, {"mib": mib})


def _perf_result(
    comparisons: list[dict[str, Any]],
    rates: list[float],
    unit: str,
    device: Device,
    extra: dict[str, Any],
) -> dict[str, Any]:
    fallback = device.fallback_ops()
    status = "fail" if not all(c["ok"] for c in comparisons) else "fallback" if fallback else "pass"
    return {
        "status": status,
        "comparisons": comparisons,
        "fallback_ops": fallback,
        "metrics": {**_summary(rates, unit), **extra},
    }
