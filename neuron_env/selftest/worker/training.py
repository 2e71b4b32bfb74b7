"""The training case: AdamW steps on a small MLP, on the device and in float64 on the CPU."""

from __future__ import annotations

import copy
import statistics
import zlib
from collections.abc import Callable
from typing import Any

import torch

from ...worker.target.compare import compare, verdict
from ...worker.target.device import Device
from ...worker.target.timing import timed
from .cases import Case
from .runner import compiled


def run_training(
    device: Device, case: Case, dtype_name: str, mode: str, repeats: int
) -> dict[str, Any]:
    """Same initial weights and data on both sides; parameters compared after the last step.

    The first step is the first call (it includes compilation); the steady state is the median of
    the other steps.
    """
    p = case.params
    model, x, y = _model_and_data(case)
    reference = copy.deepcopy(model).double()
    _train(reference, reference, x.double(), y.double(), p, lambda: None)
    on_device = copy.deepcopy(model).to(device.torch_device)
    forward = compiled(on_device, device, mode)
    target = device.torch_device
    device.clear_tracking()
    times = _train(on_device, forward, x.to(target), y.to(target), p, device.synchronize)
    fallback = device.fallback_ops()
    comparisons = _compare_parameters(on_device, reference, case.tolerances[dtype_name])
    return {
        "status": verdict(comparisons, fallback),
        "comparisons": comparisons,
        "fallback_ops": fallback,
        "first_call_s": times[0],
        "steady_s": statistics.median(times[1:]) if len(times) > 1 else None,
        "repeats": len(times) - 1,
    }


def _model_and_data(case: Case) -> tuple[Any, Any, Any]:
    p = case.params
    torch.manual_seed(zlib.crc32(case.id.encode()))
    model = torch.nn.Sequential(
        torch.nn.Linear(p["inputs"], p["hidden"]),
        torch.nn.GELU(),
        torch.nn.Linear(p["hidden"], p["outputs"]),
    )
    return model, torch.randn(p["batch"], p["inputs"]), torch.randn(p["batch"], p["outputs"])


def _train(
    model: Any, forward: Any, x: Any, y: Any, p: dict[str, Any], sync: Callable[[], None]
) -> list[float]:
    """``p["steps"]`` AdamW steps; the time of each (device synchronised)."""
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=p["lr"], eps=p["eps"], weight_decay=p["weight_decay"]
    )

    def step() -> None:
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(forward(x), y)
        loss.backward()
        optimizer.step()

    return [timed(step, sync)[0] for _ in range(int(p["steps"]))]


def _compare_parameters(on_device: Any, reference: Any, tolerance: Any) -> list[dict[str, Any]]:
    expected = dict(reference.named_parameters())
    return [
        compare(f"param {key}", value, expected[key], tolerance.rtol, tolerance.atol)
        for key, value in on_device.named_parameters()
    ]
