"""What every worker reports, as plain frozen data: statuses, compared tensors, the device found,
and why a run could not go on. The self-test and ``evaluate`` build their results from these.

Statuses (docs/commands/selftest.md, "Statuses"): ``pass``, ``fail`` (out of tolerance),
``fallback`` (correct, but ops ran on the CPU), ``unsupported`` (a documented limitation, as
documented), ``skipped`` (not applicable, or not run after a hang), ``error`` (raised, or the
worker died), ``timeout``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Status = Literal["pass", "fail", "fallback", "unsupported", "skipped", "error", "timeout"]
STATUSES: tuple[Status, ...] = (
    "pass",
    "fail",
    "fallback",
    "unsupported",
    "skipped",
    "error",
    "timeout",
)
ALWAYS_FAILING: frozenset[str] = frozenset({"fail", "error", "timeout"})


@dataclass(frozen=True)
class Comparison:
    """One tensor (an output, a gradient, a parameter) against the CPU reference."""

    tensor: str
    ok: bool
    mismatched: int = 0
    total: int = 0
    rtol: float | None = None
    atol: float | None = None
    max_abs: float | None = None
    max_rel: float | None = None
    scale: float | None = None
    used: float | None = None  # the worst element's error as a fraction of its bound (<= 1 passes)
    problem: str | None = None


@dataclass(frozen=True)
class DeviceInfo:
    """What the worker found in the target interpreter before running anything."""

    device: str
    type: str
    available: bool
    count: int
    python: str
    executable: str
    torch: str
    name: str | None = None
    accelerator: str | None = None
    accelerator_count: int | None = None
    fallback_tracking: bool = False
    compile_backend: str | None = None
    torch_neuronx: str | None = None


@dataclass(frozen=True)
class Problem:
    """Why the suite could not run (or stopped): no torch, no device, a worker that failed."""

    kind: str
    message: str
    hint: str = ""
