"""What ``neuron-env collectives`` found: one row per (op, size) and the run's verdict."""

from __future__ import annotations

from dataclasses import dataclass, field

from neuron_env.frozen import frozen


@frozen
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


@frozen
class Failure:
    """Why the run failed, in one sentence that names the op, the size and the rank."""

    kind: str  # wrong | mismatch | hang | crash | env | slow-rank | low-busbw | error | nccom
    message: str
    rank: int | None = None
    op: str | None = None
    size: int | None = None
    host: str | None = None


@frozen
class Peak:
    """The link that busbw is compared with, in GB/s (nccl-tests' unit)."""

    gbytes_per_s: float
    label: str


@frozen
class NccomRow:
    """nccom-test's figures at one of our sizes, in our units (GB/s: 10^9 B/s; nccom-test prints
    GiB/s), and our busbw over its busbw (None when it measured none)."""

    size: int
    time_s: float
    algbw: float
    busbw: float
    ratio: float | None


@frozen
class NccomOp:
    """What ``--compare-nccom`` got for one op: ``ran`` (its rows), ``not-run`` (nccom-test has
    no such op, or an earlier run of it timed out) or ``failed`` (``message`` says how)."""

    op: str
    status: str  # ran | not-run | failed
    command: str | None = None  # nccom-test's name of the op
    message: str = ""
    rows: tuple[NccomRow, ...] = ()


@frozen
class Progress:
    """A step finished on every rank (``row``), or nccom-test started on an op (``row`` None)."""

    op: str
    done: int
    total: int
    row: Row | None = None


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
    nccom: list[NccomOp] | None = None  # None: --compare-nccom was not asked for

    def nccom_row(self, op: str, size: int) -> NccomRow | None:
        """nccom-test's figures for (op, size), if it measured them."""
        for entry in self.nccom or []:
            if entry.op == op:
                return next((r for r in entry.rows if r.size == size), None)
        return None

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
