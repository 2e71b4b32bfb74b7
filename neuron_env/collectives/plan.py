"""Which (op, size) steps a sweep runs: every size measures something at this world size.

An op that splits its buffer into one chunk per rank (all-gather, reduce-scatter, all-to-all)
needs at least one element per rank, so its smallest size is the dtype's width times the world
size; the others need one element. A size given with ``--sizes`` below an op's smallest is bad
input (nothing would be measured); a size between valid sizes is rounded up to the next one, and
the report says so. The default sweep starts at each op's smallest size. Pure functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen

DEFAULT_SIZES = tuple(8 * 2**i for i in range(28))  # 8 B ... 1 GiB, by x2
WIDTH = {"float32": 4, "float16": 2, "bfloat16": 2, "int32": 4, "int64": 8, "int8": 1}
SPLIT = frozenset({"all_gather", "reduce_scatter", "all_to_all"})


@frozen
class Step:
    """One (op, size): ``size`` the whole buffer in bytes, ``count`` its elements."""

    op: str
    size: int
    count: int

    def as_dict(self) -> dict[str, Any]:
        return {"op": self.op, "size": self.size, "count": self.count}


def smallest_size(op: str, dtype: str, world: int) -> int:
    """The smallest buffer, in bytes, that gives every rank one element of ``op``'s data."""
    return WIDTH[dtype] * (world if op in SPLIT else 1)


def plan_steps(
    ops: Sequence[str], sizes: Sequence[int] | None, dtype: str, world: int
) -> tuple[list[Step], list[str]]:
    """The steps in order (op by op, sizes ascending as given) and the notes on rounded sizes.

    ``sizes`` None is the default sweep, which starts at each op's smallest size.
    """
    if sizes is not None:
        _refuse_too_small(ops, sizes, dtype, world)
    steps: list[Step] = []
    notes: list[str] = []
    for op in ops:
        unit = smallest_size(op, dtype, world)
        chosen = sizes if sizes is not None else [s for s in DEFAULT_SIZES if s >= unit]
        seen: set[int] = set()
        for size in chosen:
            rounded = -(-size // unit) * unit
            if rounded != size and sizes is not None:
                notes.append(f"{op}: {size} B rounded up to {rounded} B, a multiple of {unit} B "
                             f"({_unit(op, dtype, world)})")  # fmt: skip
            if rounded not in seen:
                seen.add(rounded)
                steps.append(Step(op, rounded, rounded // WIDTH[dtype]))
        if sizes is None and any(s % unit for s in chosen):
            notes.append(f"{op}: the default sizes are rounded up to multiples of {unit} B "
                         f"({_unit(op, dtype, world)})")  # fmt: skip
    return steps, notes


def _unit(op: str, dtype: str, world: int) -> str:
    if op in SPLIT:
        return f"{WIDTH[dtype]} B {dtype} x {world} ranks"
    return f"one {WIDTH[dtype]} B {dtype} element"


def _refuse_too_small(ops: Sequence[str], sizes: Sequence[int], dtype: str, world: int) -> None:
    low = min(sizes)
    small = [(op, smallest_size(op, dtype, world)) for op in ops]
    small = [(op, unit) for op, unit in small if low < unit]
    if small:
        each = ", ".join(f"{op} {unit} B" for op, unit in small)
        raise BadInput(
            f"--sizes {low} B is too small at {world} ranks in {dtype}: it would measure "
            f"nothing. The smallest valid size per op: {each}.",
            hint=f"Start --sizes at {max(unit for _, unit in small)} B or more, or leave "
            "--sizes out (the default sweep starts at each op's smallest size).",
        )
