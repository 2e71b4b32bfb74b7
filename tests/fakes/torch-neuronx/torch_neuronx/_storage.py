"""The fake device's memory: every neuron storage points at bytes owned by a CPU tensor.

A neuron storage is made with ``_construct_storage_from_data_pointer`` over a CPU buffer that this
module keeps alive until the storage dies. So neuron tensors have real sizes, strides and storage
offsets, views share storage exactly like on a real device, and the CPU tensor that aliases a neuron
tensor is ``buffer.view(dtype).as_strided(size, stride, storage_offset)``.
"""

from __future__ import annotations

import weakref

import torch

_BUFFERS: dict[int, torch.Tensor] = {}  # storage data pointer -> the CPU bytes behind it
_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_SET = torch.ops.aten.set_.source_Storage_storage_offset


def cpu_view(t: torch.Tensor) -> torch.Tensor:
    """A CPU tensor aliasing neuron tensor ``t`` (writes through it change ``t``)."""
    if t.numel() == 0:
        return torch.empty(t.shape, dtype=t.dtype)
    buffer = _BUFFERS[t.untyped_storage().data_ptr()]
    return buffer.view(t.dtype).as_strided(t.size(), t.stride(), t.storage_offset())


def _new_storage(nbytes: int) -> torch.UntypedStorage:
    buffer = torch.zeros(max(nbytes, 8), dtype=torch.uint8)
    pointer = buffer.data_ptr()
    storage = torch._C._construct_storage_from_data_pointer(
        pointer, torch.device("neuron:0"), nbytes
    )
    _BUFFERS[pointer] = buffer
    weakref.finalize(storage, _BUFFERS.pop, pointer, None)
    return storage


def point_at(
    t: torch.Tensor, storage: torch.UntypedStorage, size: list[int], stride: list[int]
) -> None:
    """Set ``t``'s storage, sizes and strides (the CPU kernel of ``set_`` only touches metadata)."""
    _SET.redispatch(_CPU_KEYS, t, storage, 0, size, stride)


def empty(
    size: tuple[int, ...] | list[int], dtype: torch.dtype, stride: tuple[int, ...] | None = None
) -> torch.Tensor:
    """A new neuron tensor (contiguous unless ``stride`` is given)."""
    size = list(size)
    stride = list(stride) if stride is not None else _contiguous(size)
    extent = 0 if 0 in size else 1 + sum((n - 1) * s for n, s in zip(size, stride, strict=True))
    t = torch._C._acc.create_empty_tensor((0,), dtype)
    point_at(t, _new_storage(extent * t.element_size()), size, stride)
    return t


def resize(t: torch.Tensor, size: list[int]) -> torch.Tensor:
    """``resize_``: keep the storage when it is big enough, else move to a larger one."""
    needed = _numel(size) * t.element_size()
    storage = t.untyped_storage()
    if needed > storage.nbytes() - t.storage_offset() * t.element_size():
        old = cpu_view(t).reshape(-1).clone() if t.numel() else None
        storage = _new_storage(needed)
        point_at(t, storage, size, _contiguous(size))
        if old is not None:
            cpu_view(t).reshape(-1)[: old.numel()] = old[: t.numel()]
        return t
    _SET.redispatch(_CPU_KEYS, t, storage, t.storage_offset(), size, _contiguous(size))
    return t


def to_neuron(cpu: torch.Tensor) -> torch.Tensor:
    """A new neuron tensor holding a copy of ``cpu`` (same strides when they are dense)."""
    dense = cpu.numel() > 0 and (
        cpu.is_contiguous()
        or (cpu.dim() == 4 and cpu.is_contiguous(memory_format=torch.channels_last))
    )
    out = empty(cpu.shape, cpu.dtype, cpu.stride() if dense else None)
    if cpu.numel():
        cpu_view(out).copy_(cpu)
    return out


def _contiguous(size: list[int]) -> list[int]:
    strides, step = [], 1
    for n in reversed(size):
        strides.append(step)
        step *= max(n, 1)
    return strides[::-1]


def _numel(size: list[int]) -> int:
    count = 1
    for n in size:
        count *= n
    return count
