"""What ``neuron-env collectives`` found: one row per (op, size) and the run's verdict."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Row:
    """One (op, size) over every rank, in nccl-tests' terms: ``size`` is the whole buffer in
    bytes, ``time_s`` the median over ranks of each rank's median iteration, bandwidths in GB/s."""

    op: str
    size: int
    count: int
    dtype: str
    redop: str
    time_min_s: float
    time_s: float
    time_max_s: float
    algbw: float
    busbw: float
    wrong: int
    peak_ratio: float | None = None


@dataclass(frozen=True)
class Failure:
    """Why the run failed, in one sentence that names the op, the size and the rank."""

    kind: str  # wrong | mismatch | hang | slow-rank | low-busbw | error
    message: str
    rank: int | None = None
    op: str | None = None
    size: int | None = None


@dataclass(frozen=True)
class Peak:
    """The link that busbw is compared with, in GB/s (nccl-tests' unit)."""

    gbytes_per_s: float
    label: str


@dataclass
class CollectivesResult:
    backend: str
    world_size: int
    dtype: str
    rank: int = 0
    hosts: list[str] = field(default_factory=list)
    rows: list[Row] = field(default_factory=list)
    failures: list[Failure] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    peak: Peak | None = None
    complete: bool = False

    @property
    def ok(self) -> bool:
        return self.complete and not self.failures

    @property
    def avg_busbw(self) -> float:
        rows = [r.busbw for r in self.rows if r.size]
        return sum(rows) / len(rows) if rows else 0.0

    @property
    def out_of_bounds(self) -> int:
        return sum(r.wrong for r in self.rows)
