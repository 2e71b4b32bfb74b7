"""Run in an interpreter with torch: the collectives worker's check over synthetic per-rank
outputs, each corrupted one way, at several world sizes; prints one JSON list of the verdicts.

The outputs are what each rank must hold (the worker's own golden), cast to the dtype, then
corrupted as a broken fabric or runtime would: a NaN, an Inf, all zeros, one flipped bit, another
rank's chunk, the previous size's result left in the buffer. The reductions are also summed in the
dtype itself in a shuffled order, as a fabric adds, to show the exact result needs no tolerance.
Usage: python collectives_corruptions.py WORLD[,WORLD...] (run with the repository on sys.path).
"""

from __future__ import annotations

import json
import random
import sys

import torch

from neuron_env.collectives.worker import ops

CORRUPTIONS = ("nan", "inf", "zeros", "flip", "swap", "stale")
DTYPES = ("float32", "bfloat16", "float16", "int8", "int32")
SEED = 3
BITS = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}


def output(op: str, dtype: str, rank: int, world: int, count: int, seed: int) -> torch.Tensor:
    how = ops.pattern(op, dtype, world, seed)
    return ops.golden(ops.OPS[op], rank, world, count, how).to(ops.DTYPES[dtype])


def corrupt(kind: str, op: str, dtype: str, rank: int, world: int, count: int) -> torch.Tensor:
    """Rank ``rank``'s right output of the step, corrupted as ``kind`` says."""
    got = output(op, dtype, rank, world, count, SEED)
    n = got.numel()
    if kind == "nan":
        got[n // 2] = float("nan")
    elif kind == "inf":
        got[n - 1] = float("inf")
    elif kind == "zeros":
        got.zero_()
    elif kind == "flip":  # the lowest bit of one element
        got.view(BITS[got.element_size()])[n // 3] ^= 1
    elif kind == "swap":
        got = _swapped(op, dtype, rank, world, count, got)
    elif kind == "stale":  # the previous (half) size's result still in the buffer
        previous = output(op, dtype, rank, world, count // 2, SEED - 1)
        got[: previous.numel()] = previous
    return got


def _swapped(
    op: str, dtype: str, rank: int, world: int, count: int, got: torch.Tensor
) -> torch.Tensor:
    """Another rank's chunk where this rank's should be."""
    if op == "reduce_scatter":  # this rank got its neighbour's chunk of the sum
        return output(op, dtype, (rank + 1) % world, world, count, SEED)
    chunks = list(got.chunk(world))
    chunks[0], chunks[1] = chunks[1], chunks[0]  # rank 0's and rank 1's chunks trade places
    return torch.cat(chunks)


def summed_in_dtype(op: str, dtype: str, rank: int, world: int, count: int) -> torch.Tensor:
    """The reduction added in the dtype, one rank at a time, in a shuffled order."""
    how = ops.pattern(op, dtype, world, SEED)
    chunk = count // world
    start, size = (rank * chunk, chunk) if op == "reduce_scatter" else (0, count)
    order = list(range(world))
    random.Random(world).shuffle(order)
    total = torch.zeros(size, dtype=ops.DTYPES[dtype])
    for r in order:
        total += ops.values(r, size, start, how).to(ops.DTYPES[dtype])
    return total


def verdicts(world: int) -> list[dict[str, object]]:
    count, rank = 4 * world, world - 1
    found: list[dict[str, object]] = []
    for dtype in DTYPES:
        for op in ops.OPS:
            right = output(op, dtype, rank, world, count, SEED)
            found.append(_verdict(world, dtype, op, "none", rank, count, right))
            if ops.OPS[op].reduces:
                added = summed_in_dtype(op, dtype, rank, world, count)
                found.append(_verdict(world, dtype, op, "summed-in-dtype", rank, count, added))
            for kind in CORRUPTIONS:
                if kind in ("nan", "inf") and dtype.startswith("int"):
                    continue  # integers hold neither
                got = corrupt(kind, op, dtype, rank, world, count)
                found.append(_verdict(world, dtype, op, kind, rank, count, got))
    return found


def _verdict(
    world: int, dtype: str, op: str, kind: str, rank: int, count: int, got: torch.Tensor
) -> dict[str, object]:
    wrong = ops.check(op, dtype, rank, world, count, SEED, got)
    return {"world": world, "dtype": dtype, "op": op, "kind": kind, "count": got.numel(),
            "wrong": wrong}  # fmt: skip


if __name__ == "__main__":
    worlds = [int(w) for w in sys.argv[1].split(",")]
    print(json.dumps([v for world in worlds for v in verdicts(world)]))
