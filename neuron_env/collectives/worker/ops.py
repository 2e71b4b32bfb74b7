"""The five collectives: each one's inputs on a rank, the call, and its golden output on the CPU.

Sizes are nccl-tests' sizes: the whole buffer in bytes (all-reduce's buffer, all-gather's output,
reduce-scatter's input, all-to-all's buffer, broadcast's buffer), so ``count`` is that buffer's
element count and is a multiple of the world size for the ops that split it.

Every input is a small integer whose exact result is representable in the dtype, as nccl-tests
fills its buffers with a pattern per rank and position, so **every op is checked bit-exact**
(a NaN or an Inf is never equal to its golden):

* ops that only move data (all-gather, all-to-all, broadcast): ``v = (r + y(i, seed)) mod m - m//2``
  with ``m`` a prime no larger than the dtype's exact range, so at one position every rank (up to
  ``m`` ranks) holds a different value and a chunk from the wrong rank shows;
* reductions (all-reduce, reduce-scatter): values of magnitude at most ``S`` where ``k * S`` stays
  within the dtype's exact integers for the ``k`` ranks that add into one element, so every partial
  sum, in whatever order the fabric adds, is an exact integer: the tolerance is 0. Past the
  dtype's range (bf16 over 256 ranks, int8 over 127) each element takes values from a subset of
  the ranks (every ``stride``-th), each rank still feeding its share of elements.

``seed`` is the step's number in the sweep, so a buffer left over from the previous size differs.
"""

from __future__ import annotations

import math
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
#: The largest L such that every integer in [-L, L] is exact in the dtype (2^(mantissa bits + 1)).
EXACT = {"float32": 2**24, "float16": 2**11, "bfloat16": 2**8, "int32": 2**31 - 1,
         "int64": 2**62, "int8": 127}  # fmt: skip
#: The modulus of the data-moving pattern: a prime, with m // 2 <= EXACT.
MOVING_MODULUS = {"float16": 4093, "bfloat16": 509, "int8": 251}
LARGE_MODULUS = 65521
SPREAD = 30  # reductions' largest magnitude per rank, where the dtype's range allows
_P, _INDEX, _SEED, _RANK = 2_147_483_647, 7_919, 104_729, 1_000_003  # a prime and three steps


@dataclass(frozen=True)
class Pattern:
    """How one step's values are made: ``v(r, i) = mix(r, i) mod modulus - modulus // 2`` where
    ``(i + r) % stride == 0``, else 0."""

    modulus: int
    stride: int
    seed: int
    mixed: bool  # reductions: the rank is mixed in, so a sum over every rank is not constant


def pattern(op_name: str, dtype: str, world: int, seed: int) -> Pattern:
    """The values of an op's step at ``world`` ranks, chosen so its exact result fits ``dtype``."""
    exact = EXACT[dtype]
    if not OPS[op_name].reduces:
        return Pattern(MOVING_MODULUS.get(dtype, LARGE_MODULUS), 1, seed, mixed=False)
    stride = math.ceil(world / exact)
    adders = math.ceil(world / stride)  # the most ranks adding into one element
    spread = min(SPREAD, exact // adders)
    return Pattern(2 * spread + 1, stride, seed, mixed=True)


def values(rank: int, count: int, start: int, how: Pattern) -> torch.Tensor:
    """``v(rank, i)`` for ``i`` in ``start .. start + count``, as int64 on the CPU.

    The position (and, for reductions, the rank) goes through a square modulo a prime, so the
    values look random: no chunk repeats another, and a sum over the ranks is not constant.
    """
    index = torch.arange(start, start + count, dtype=torch.int64)
    mix = index * _INDEX + how.seed * _SEED
    if how.mixed:
        mix = mix + rank * _RANK
    mix = mix % _P
    mix = mix * mix % _P
    if not how.mixed:
        mix = mix + rank  # at one position, every rank (up to the modulus) differs
    out = mix % how.modulus - how.modulus // 2
    if how.stride > 1:
        out = torch.where((index + rank) % how.stride == 0, out, torch.zeros_like(out))
    return out


@dataclass(frozen=True)
class Op:
    """One collective: ``redop`` as nccl-tests prints it, ``split`` (its buffer is cut into one
    chunk per rank), ``in_place`` (its buffer is both input and output, so it is refilled before
    each call), ``same_everywhere`` (every rank's output is the same, so ranks are compared with
    each other too)."""

    name: str
    redop: str
    split: bool
    in_place: bool
    same_everywhere: bool
    call: Callable[[torch.Tensor, torch.Tensor], Any]

    @property
    def reduces(self) -> bool:
        return self.redop != "none"


def _sum_over_ranks(world: int, count: int, start: int, how: Pattern) -> torch.Tensor:
    total = torch.zeros(count, dtype=torch.int64)
    for r in range(world):
        total += values(r, count, start, how)
    return total


OPS = {
    "all_reduce": Op("all_reduce", "sum", split=False, in_place=True, same_everywhere=True,
                     call=lambda out, _inp: dist.all_reduce(out)),
    "all_gather": Op("all_gather", "none", split=True, in_place=False, same_everywhere=True,
                     call=lambda out, inp: dist.all_gather_into_tensor(out, inp)),
    "reduce_scatter": Op("reduce_scatter", "sum", split=True, in_place=False,
                         same_everywhere=False,
                         call=lambda out, inp: dist.reduce_scatter_tensor(out, inp)),
    "all_to_all": Op("all_to_all", "none", split=True, in_place=False, same_everywhere=False,
                     call=lambda out, inp: dist.all_to_all_single(out, inp)),
    "broadcast": Op("broadcast", "none", split=False, in_place=True, same_everywhere=True,
                    call=lambda out, _inp: dist.broadcast(out, src=0)),
}  # fmt: skip


def buffers(
    op: Op, rank: int, world: int, count: int, how: Pattern
) -> tuple[torch.Tensor, torch.Tensor]:
    """This rank's input and output buffers, int64 on the CPU (the caller casts and moves)."""
    if op.name == "all_gather":
        return values(rank, count // world, 0, how), torch.zeros(count, dtype=torch.int64)
    if op.name == "reduce_scatter":
        return values(rank, count, 0, how), torch.zeros(count // world, dtype=torch.int64)
    return values(rank, count, 0, how), torch.zeros(count, dtype=torch.int64)


def golden(op: Op, rank: int, world: int, count: int, how: Pattern) -> torch.Tensor:
    """What ``rank`` must hold after the op, exactly, as int64."""
    chunk = count // world
    if op.name == "all_reduce":
        return _sum_over_ranks(world, count, 0, how)
    if op.name == "reduce_scatter":
        return _sum_over_ranks(world, chunk, rank * chunk, how)
    if op.name == "all_gather":
        return torch.cat([values(r, chunk, 0, how) for r in range(world)])
    if op.name == "all_to_all":
        return torch.cat([values(r, chunk, rank * chunk, how) for r in range(world)])
    return values(0, count, 0, how)


def check(
    op_name: str, dtype: str, rank: int, world: int, count: int, seed: int, got: torch.Tensor
) -> dict[str, Any] | None:
    """``rank``'s output of one step against its golden, bit-exact: None when right, else how
    many elements are wrong and the first (``index``, ``got``, ``expected``). NaN and Inf are
    never equal to a golden value, so they are always wrong."""
    op = OPS[op_name]
    expected = golden(op, rank, world, count, pattern(op_name, dtype, world, seed))
    return first_wrong(got, expected)


def first_wrong(got: torch.Tensor, expected: torch.Tensor) -> dict[str, Any] | None:
    """How many elements of ``got`` differ from ``expected`` (int64), and the first one."""
    data = got.detach().cpu().reshape(-1)
    if data.numel() != expected.numel():
        sizes = (data.numel(), expected.numel())
        return {"wrong": max(sizes), "index": 0, "got": f"{sizes[0]} elements",
                "expected": f"{sizes[1]} elements"}  # fmt: skip
    if data.dtype.is_floating_point:
        wrong = data.double() != expected.double()  # every value is exact: no tolerance
    else:
        wrong = data.long() != expected
    count = int(wrong.sum())
    if count == 0:
        return None
    index = int(wrong.nonzero()[0, 0])
    value = data[index].item()
    return {"wrong": count, "index": index, "got": _number(value),
            "expected": int(expected[index])}  # fmt: skip


def _number(value: float | int) -> float | int | str:
    """A value for the report: an integer as such, NaN and Inf by name (JSON has neither)."""
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        if value.is_integer():
            return int(value)
    return value


def fingerprint(out: torch.Tensor) -> list[float | str]:
    """Two sums that differ when two ranks' outputs differ (compared across ranks)."""
    data = out.detach().cpu().double().reshape(-1)
    weights = torch.arange(data.numel(), dtype=torch.float64) % 97 + 1
    return [_number(float(data.sum())), _number(float((data * weights).sum()))]
