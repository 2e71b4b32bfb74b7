"""The fake ``neuron`` torch.compile backend: runs the captured graph eagerly on the fake device.

Like the real backend (TorchNeuron beta), it rejects graphs with symbolic shapes, so
``torch.compile(..., dynamic=True)`` fails and a new input shape compiles a new graph. It also
rejects graphs holding an op named in ``FAKE_NEURON_COMPILE_FAIL_OPS`` (see ``_faults``).
"""

from __future__ import annotations

from typing import Any

import torch

from torch_neuronx import _faults


def neuron_backend(gm: torch.fx.GraphModule, example_inputs: list[Any]) -> Any:
    if any(_symbolic(node.meta.get("example_value")) for node in gm.graph.nodes):
        raise RuntimeError(
            "Unbounded dynamism is disabled: the neuron backend does not support dynamic shapes "
            "(SymInt within FX Graphs); use torch.compile(..., dynamic=False)"
        )
    _faults.reject_graph(gm)
    return gm.forward


def _symbolic(value: object) -> bool:
    if isinstance(value, torch.SymInt | torch.SymFloat):
        return True
    if isinstance(value, torch.Tensor):
        return any(isinstance(size, torch.SymInt) for size in value.shape)
    return False
