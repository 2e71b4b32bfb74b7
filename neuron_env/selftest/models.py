"""Results of the smoke test and the self-test suite, as plain frozen data.

Statuses of a case (docs/commands/selftest.md, "Statuses"):

* ``pass`` — the device matched the CPU reference within the case's tolerance;
* ``fail`` — it did not (the comparisons say by how much);
* ``fallback`` — correct, but ops ran on the CPU instead of the device (``fallback_ops``);
* ``unsupported`` — a documented limitation of the TorchNeuron beta, observed as documented;
* ``skipped`` — not applicable here (e.g. the all-reduce needs 2 devices), or not run after a hang;
* ``error`` — the case raised or the worker crashed during it;
* ``timeout`` — the case did not finish in time; its worker was killed.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import field
from typing import Any

from neuron_env.frozen import frozen
from neuron_env.selftest.worker.cases import Case
from neuron_env.worker.results import (
    ALWAYS_FAILING,
    STATUSES,
    Comparison,
    DeviceInfo,
    Problem,
    Status,
)


@frozen
class CaseResult:
    """One variant (``case/dtype/mode``) as measured."""

    name: str
    status: Status
    message: str = ""
    behaviour: str | None = None
    comparisons: tuple[Comparison, ...] = ()
    fallback_ops: tuple[str, ...] | None = None  # None: the device cannot tell (not tracked)
    first_call_s: float | None = None  # includes compilation
    steady_s: float | None = None  # median of the repeats, device synchronised
    repeats: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    wall_s: float | None = None  # as seen by neuron-env: start event to result event

    @property
    def case(self) -> str:
        return self.name.split("/")[0]

    @property
    def dtype(self) -> str:
        return self.name.split("/")[1]

    @property
    def mode(self) -> str:
        return self.name.split("/")[2]

    def worst(self) -> Comparison | None:
        """The comparison that failed worst, else the one with the largest relative error."""
        if not self.comparisons:
            return None
        return max(self.comparisons, key=lambda c: (not c.ok, c.max_rel or 0.0, c.max_abs or 0.0))


@frozen
class Peak:
    """Peak matmul throughput for the matmul throughput case, from the support matrix.

    One torch device is one *logical* NeuronCore, so the comparison is with that core's share of
    the chip's peak: ``tflops[dtype] / logical_cores``.
    """

    chip: str
    tflops: dict[str, float]
    logical_cores: int
    lnc: int
    source: str


@frozen
class SuiteResult:
    """A self-test run: the device found, one result per variant, and why it stopped if it did.

    ``ok`` is the overall verdict; ``summary`` is one line and ``details`` a few lines, ready for a
    doctor finding.
    """

    level: str
    device: str
    python: str
    info: DeviceInfo | None
    cases: tuple[CaseResult, ...]
    problem: Problem | None = None
    wall_s: float = 0.0
    allow_fallback: bool = False
    peak: Peak | None = None

    @property
    def ok(self) -> bool:
        """Passed: no problem, no failing case, and cases at all (the harness makes sure every
        requested variant has a result or the run a problem)."""
        return self.problem is None and bool(self.cases) and not self.failing()

    def failing(self) -> list[CaseResult]:
        bad = set(ALWAYS_FAILING) | (set() if self.allow_fallback else {"fallback"})
        return [c for c in self.cases if c.status in bad]

    def counts(self) -> dict[str, int]:
        found = Counter(c.status for c in self.cases)
        return {status: found[status] for status in STATUSES if found[status]}

    @property
    def summary(self) -> str:
        if self.problem is not None:
            return self.problem.message
        counts = ", ".join(f"{n} {status}" for status, n in self.counts().items())
        verdict = "passed" if self.ok else "FAILED"
        return (
            f"self-test ({self.level}) on {self.device} {verdict}: {counts} in {self.wall_s:.1f} s"
        )

    @property
    def details(self) -> list[str]:
        lines = [f"{c.name}: {c.status} — {c.message}" for c in self.failing()]
        lines += [f"{c.name}: {c.message}" for c in self.cases if c.status == "unsupported"]
        if self.problem is not None and self.problem.hint:
            lines.append(self.problem.hint)
        return lines


@frozen
class SmokeResult(SuiteResult):
    """The smoke test: device availability and count, then a matmul in fp32 and bf16 vs CPU."""

    @property
    def summary(self) -> str:
        if self.problem is not None:
            return self.problem.message
        info = self.info
        count = f"{info.count} device(s)" if info else "device"
        parts = [f"{c.dtype} {c.status}" for c in self.cases]
        verdict = "passed" if self.ok else "FAILED"
        return f"smoke test on {self.device} ({count}) {verdict}: matmul " + ", ".join(parts)


@frozen
class CaseListing:
    """``selftest --list``: the cases ``level`` runs, then the case ids each higher level adds."""

    level: str
    cases: tuple[Case, ...]
    added: tuple[tuple[str, tuple[str, ...]], ...] = ()
