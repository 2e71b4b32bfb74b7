"""Timing with the device synchronised: the first call (which includes compilation) is reported
apart from the steady state (the median of the repeats)."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any


def timed(run: Callable[[], Any], synchronize: Callable[[], None]) -> tuple[float, Any]:
    synchronize()
    start = time.perf_counter()
    value = run()
    synchronize()
    return time.perf_counter() - start, value


def first_and_steady(
    run: Callable[[], Any], synchronize: Callable[[], None], repeats: int
) -> tuple[dict[str, Any], Any]:
    """Run once (first call), then ``repeats`` more; returns the timings and the last value."""
    first_s, value = timed(run, synchronize)
    times = []
    for _ in range(repeats):
        elapsed, value = timed(run, synchronize)
        times.append(elapsed)
    timings = {
        "first_call_s": first_s,
        "steady_s": statistics.median(times) if times else None,
        "repeats": len(times),
    }
    return timings, value
