"""The fake ``neuron`` torch.distributed backend: gloo on CPU copies of the neuron tensors."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
from torch._C._distributed_c10d import _create_work_from_future
from torch.futures import Future


class NeuronProcessGroup(dist.ProcessGroup):  # type: ignore[misc]
    def __init__(self, store: Any, rank: int, size: int, timeout: timedelta) -> None:
        super().__init__(rank, size)
        self._gloo = dist.ProcessGroupGloo(store, rank, size, timeout)

    def getBackendName(self) -> str:
        return "neuron"

    def allreduce(self, tensor_list: list[torch.Tensor], opts: Any = None) -> Any:
        copies = [t.cpu() for t in tensor_list]
        options = opts if opts is not None else dist.AllreduceOptions()
        self._gloo.allreduce(copies, options).wait()
        for tensor, copy in zip(tensor_list, copies, strict=True):
            tensor.copy_(copy)
        return _done(tensor_list)

    def barrier(self, opts: Any = None) -> Any:
        self._gloo.barrier(opts if opts is not None else dist.BarrierOptions()).wait()
        return _done(None)


def _done(value: object) -> Any:
    future: Future[object] = Future()
    future.set_result(value)
    return _create_work_from_future(future)


def _create(store: Any, rank: int, size: int, timeout: timedelta) -> NeuronProcessGroup:
    return NeuronProcessGroup(store, rank, size, timeout)


def register() -> None:
    if dist.is_available() and "neuron" not in dist.Backend.backend_list:
        dist.Backend.register_backend("neuron", _create, devices=["neuron"])
