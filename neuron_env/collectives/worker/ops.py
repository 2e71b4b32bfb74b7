"""The five collectives: each one's inputs on a rank, the call, and its golden output on the CPU.

Sizes are nccl-tests' sizes: the whole buffer in bytes (all-reduce's buffer, all-gather's output,
reduce-scatter's input, all-to-all's buffer, broadcast's buffer), so ``count`` is that buffer's
element count and is a multiple of the world size for the ops that split it. Rank ``r`` holds
small integers ``v(r, i)``, exact in every dtype offered, so a float result can only be off by the
rounding of its reduction, which :func:`tolerance` bounds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.distributed as dist

DTYPES = {
    "float32": torch.float32,
    "float16": torch.float16,
    "bfloat16": torch.bfloat16,
    "int32": torch.int32,
    "int64": torch.int64,
    "int8": torch.int8,
}
SPREAD = 30  # |v(r, i)| <= SPREAD; an int8 sum over 4 ranks still fits


def values(rank: int, count: int, start: int = 0) -> torch.Tensor:
    """``v(rank, i)`` for ``i`` in ``start .. start + count``, as int64 on the CPU."""
    index = torch.arange(start, start + count, dtype=torch.int64)
    return (index * 7 + rank * 13) % (2 * SPREAD + 1) - SPREAD


@dataclass(frozen=True)
class Op:
    """One collective: ``redop`` as nccl-tests prints it, ``in_place`` (its buffer is both input
    and output, so it is refilled before each call), ``same_everywhere`` (every rank's output is
    the same, so ranks are compared with each other too) and its nccl-tests bus factor."""

    name: str
    redop: str
    split: bool
    in_place: bool
    same_everywhere: bool
    call: Callable[[torch.Tensor, torch.Tensor], Any]
    golden: Callable[[int, int, int], torch.Tensor]


def _sum_over_ranks(world: int, count: int, start: int = 0) -> torch.Tensor:
    return sum(
        (values(r, count, start) for r in range(world)), torch.zeros(count, dtype=torch.int64)
    )


OPS = {
    "all_reduce": Op(
        "all_reduce", "sum", split=False, in_place=True, same_everywhere=True,
        call=lambda out, _inp: dist.all_reduce(out),
        golden=lambda rank, world, count: _sum_over_ranks(world, count),
    ),
    "all_gather": Op(
        "all_gather", "none", split=True, in_place=False, same_everywhere=True,
        call=lambda out, inp: dist.all_gather_into_tensor(out, inp),
        golden=lambda rank, world, count: torch.cat(
            [values(r, count // world) for r in range(world)]
        ),
    ),
    "reduce_scatter": Op(
        "reduce_scatter", "sum", split=True, in_place=False, same_everywhere=False,
        call=lambda out, inp: dist.reduce_scatter_tensor(out, inp),
        golden=lambda rank, world, count: _sum_over_ranks(
            world, count // world, rank * (count // world)
        ),
    ),
    "all_to_all": Op(
        "all_to_all", "none", split=True, in_place=False, same_everywhere=False,
        call=lambda out, inp: dist.all_to_all_single(out, inp),
        golden=lambda rank, world, count: torch.cat(
            [values(r, count // world, rank * (count // world)) for r in range(world)]
        ),
    ),
    "broadcast": Op(
        "broadcast", "none", split=False, in_place=True, same_everywhere=True,
        call=lambda out, _inp: dist.broadcast(out, src=0),
        golden=lambda rank, world, count: values(0, count),
    ),
}  # fmt: skip


def buffers(op: Op, rank: int, world: int, count: int) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's input and output buffers, int64 on the CPU (the caller casts and moves)."""
    if op.name == "all_gather":
        return values(rank, count // world), torch.zeros(count, dtype=torch.int64)
    if op.name == "reduce_scatter":
        return values(rank, count), torch.zeros(count // world, dtype=torch.int64)
    return values(rank, count), torch.zeros(count, dtype=torch.int64)


def tolerance(dtype: torch.dtype, world: int) -> float:
    """0 for integers; for floats the rounding a sum of ``world`` terms of at most SPREAD can
    collect (each partial sum rounds once), twice over for the margin."""
    if not dtype.is_floating_point:
        return 0.0
    return float(2.0 * torch.finfo(dtype).eps * world * world * SPREAD)


def first_wrong(got: torch.Tensor, golden: torch.Tensor, bound: float) -> dict[str, Any] | None:
    """How many elements of ``got`` miss ``golden`` by more than ``bound``, and the first one."""
    error = (got.cpu().double() - golden.double()).abs()
    wrong = error > bound
    count = int(wrong.sum())
    if count == 0:
        return None
    index = int(wrong.nonzero()[0, 0])
    return {
        "wrong": count,
        "index": index,
        "got": float(got.cpu().double()[index]),
        "expected": float(golden[index]),
    }


def fingerprint(out: torch.Tensor) -> list[float]:
    """Two sums that differ when two ranks' outputs differ (compared across ranks)."""
    data = out.cpu().double()
    weights = torch.arange(data.numel(), dtype=torch.float64) % 97 + 1
    return [float(data.sum()), float((data * weights).sum())]
