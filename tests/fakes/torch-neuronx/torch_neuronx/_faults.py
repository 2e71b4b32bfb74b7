"""Fault injection for tests, driven by environment variables (comma-separated ATen op names):

FAKE_NEURON_NO_DEVICE=1            no device: is_available() is False, device_count() is 0
FAKE_NEURON_WRONG_OPS=aten::mm     results of these ops are 5% too large
FAKE_NEURON_FALLBACK_OPS=aten::sort  these ops are reported by get_fallback_ops()
FAKE_NEURON_HANG_OPS=aten::cumsum  these ops never return
FAKE_NEURON_CRASH_OPS=aten::topk   these ops abort the process (SIGABRT), like a runtime crash
FAKE_NEURON_HANG_AT_LOAD=1         loading the backend (import torch) never returns
FAKE_NEURON_COMPILE_FAIL_OPS=gelu  torch.compile(backend="neuron") rejects graphs calling these
                                   (torch-level names in the captured graph: gelu, sort, Tensor.sum
                                   as sum), the way the compiler rejects an op it cannot lower
"""

from __future__ import annotations

import os
import time

import torch

EXECUTED: list[str] = []
FELL_BACK: list[str] = []


def _names(variable: str) -> set[str]:
    return {n.strip() for n in os.environ.get(variable, "").split(",") if n.strip()}


def no_device() -> bool:
    return os.environ.get("FAKE_NEURON_NO_DEVICE", "") not in ("", "0")


def hang_at_load() -> None:
    if os.environ.get("FAKE_NEURON_HANG_AT_LOAD", "") not in ("", "0"):
        while True:
            time.sleep(3600)


def before(name: str) -> None:
    if no_device():
        raise RuntimeError("Neuron device not found (fake torch_neuronx: FAKE_NEURON_NO_DEVICE)")
    if name not in EXECUTED:
        EXECUTED.append(name)
    if name in _names("FAKE_NEURON_FALLBACK_OPS") and name not in FELL_BACK:
        FELL_BACK.append(name)
    if name in _names("FAKE_NEURON_CRASH_OPS"):
        os.abort()
    if name in _names("FAKE_NEURON_HANG_OPS"):
        while True:
            time.sleep(3600)


def corrupt(name: str, value: torch.Tensor) -> torch.Tensor:
    if name in _names("FAKE_NEURON_WRONG_OPS") and value.is_floating_point():
        return value * 1.05
    return value


def reject_graph(gm: torch.fx.GraphModule) -> None:
    """Raise like a compiler that cannot lower an op, for graphs calling a named op."""
    names = _names("FAKE_NEURON_COMPILE_FAIL_OPS")
    for node in gm.graph.nodes:
        name = getattr(node.target, "__name__", node.target)
        if node.op in ("call_function", "call_method") and name in names:
            raise RuntimeError(
                f"neuronx-cc: failed to lower '{name}' (fake fault FAKE_NEURON_COMPILE_FAIL_OPS)"
            )
