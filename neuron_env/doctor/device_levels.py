"""The device levels of the doctor: the smoke test (level 1) and the standard suite (level 2),
run in the target interpreter by the self-test harness and kept as facts."""

from __future__ import annotations

from pathlib import Path

from neuron_env.facts import DeviceFacts, DeviceRun
from neuron_env.selftest import ProgressCallback, SuiteResult, run_smoke, run_suite


def probe_device(
    python: Path,
    level: int,
    *,
    device: str = "neuron",
    timeout: float = 300.0,
    progress: ProgressCallback | None = None,
) -> DeviceFacts:
    """Level 1 runs the smoke test; level 2 also the standard self-test suite."""
    smoke = run_smoke(python, device=device, timeout=timeout, progress=progress)
    suite = None
    if level >= 2 and smoke.problem is None:  # no device at all: the suite would say it again
        suite = run_suite(
            python, level="standard", device=device, timeout=timeout, progress=progress
        )
    return DeviceFacts(device, level, _kept(smoke), _kept(suite) if suite else None)


def _kept(result: SuiteResult) -> DeviceRun:
    problem = result.problem
    return DeviceRun(
        ok=result.ok,
        summary=result.summary,
        details=tuple(result.details),
        hint=problem.hint if problem is not None and problem.hint else "",
        counts=result.counts(),
        wall_s=round(result.wall_s, 3),
    )
