"""Turning the worker's JSON events into result models, with a one-line message per case."""

from __future__ import annotations

from typing import Any

from neuron_env.selftest.models import CaseResult, Peak
from neuron_env.worker.events import (
    comparison,
    comparison_line,
    device_info,
    number,
    problem,
    share_of_bound,
)
from neuron_env.worker.exits import why_it_ended
from neuron_env.worker.results import STATUSES, Status

__all__ = [
    "case_result",
    "comparison",
    "comparison_line",
    "crashed",
    "describe",
    "device_info",
    "not_run",
    "number",
    "problem",
    "share_of_bound",
    "timed_out",
]


def case_result(event: dict[str, Any], wall_s: float | None, peak: Peak | None) -> CaseResult:
    """A ``result`` event as a :class:`CaseResult`; figures the worker sent as text stay text."""
    status: Status = event["status"] if event.get("status") in STATUSES else "error"
    comparisons = tuple(comparison(c) for c in event.get("comparisons") or ())
    fallback = event.get("fallback_ops")
    metrics = dict(event.get("metrics") or {})
    name = str(event["name"])
    if peak is not None and "tflops" in metrics:
        metrics.update(_against_peak(metrics["tflops"], name.split("/")[1], peak))
    result = CaseResult(
        name=name,
        status=status,
        behaviour=event.get("behaviour"),
        comparisons=comparisons,
        fallback_ops=tuple(fallback) if fallback is not None else None,
        first_call_s=number(event.get("first_call_s")),
        steady_s=number(event.get("steady_s")),
        repeats=event.get("repeats"),
        metrics=metrics,
        warnings=tuple(event.get("warnings") or ()),
        wall_s=wall_s,
    )
    return _with_message(result, str(event.get("message") or ""))


def _against_peak(tflops: float, dtype: str, peak: Peak) -> dict[str, Any]:
    chip_peak = peak.tflops.get(dtype)
    if chip_peak is None:
        return {}
    per_device = chip_peak / peak.logical_cores
    return {"peak_tflops_per_device": per_device, "fraction_of_peak": tflops / per_device}


def timed_out(name: str, timeout: float, wall_s: float) -> CaseResult:
    return CaseResult(
        name=name,
        status="timeout",
        message=f"did not finish within {timeout:g} s; the worker was killed",
        wall_s=wall_s,
    )


def crashed(name: str, returncode: int | None, stderr_tail: str, wall_s: float) -> CaseResult:
    why = why_it_ended(returncode, stderr_tail)
    return CaseResult(
        name=name,
        status="error",
        message=f"the worker exited with code {returncode} during this case{why}",
        wall_s=wall_s,
    )


def not_run(name: str, after: CaseResult) -> CaseResult:
    """A variant left out because the device hung (or the worker died) in ``after``."""
    what = "the device hung" if after.status == "timeout" else "the worker died"
    return CaseResult(
        name=name,
        status="skipped",
        message=f"not run: {what} in {after.name} (--keep-going runs the rest anyway)",
    )


def _with_message(result: CaseResult, given: str) -> CaseResult:
    from dataclasses import replace

    return replace(result, message=given or describe(result))


def describe(result: CaseResult) -> str:
    """One line saying what was measured."""
    if result.status == "unsupported" or (result.behaviour and result.status == "pass"):
        return _figure_suffix(result.behaviour or "", result)
    if result.status == "fallback":
        return "correct, but fell back to CPU: " + ", ".join(result.fallback_ops or ())
    if "tflops" in result.metrics or "gbps" in result.metrics:
        return _perf_line(result)
    if "world_size" in result.metrics and result.status == "pass":
        m = result.metrics
        return f"exact sum on {m['world_size']} ranks ({m['backend']}, {m['bytes'] / 2**20:g} MiB)"
    failing = [c for c in result.comparisons if not c.ok]
    if failing:  # the first is an output when outputs are wrong: the most telling
        more = f"; {len(failing) - 1} more tensor(s) off" if len(failing) > 1 else ""
        said = f"{result.behaviour}: " if result.behaviour else ""
        return said + comparison_line(failing[0], True) + more
    worst = result.worst()
    return comparison_line(worst, False) if worst is not None else ""


def _figure_suffix(text: str, result: CaseResult) -> str:
    worst = result.worst()
    if worst is None or worst.max_rel is None:
        return text
    return f"{text} (max rel {worst.max_rel:.1e})"


def _perf_line(result: CaseResult) -> str:
    m = result.metrics
    if "gbps" in m:
        spread = f"{m['gbps_min']:.1f}–{m['gbps_max']:.1f}"
        line = f"{m['gbps']:.1f} GB/s median of {m['rounds']} rounds ({spread})"
    else:
        line = (
            f"{m['tflops']:.3g} TFLOP/s median of {m['rounds']} rounds "
            f"({m['tflops_min']:.3g}–{m['tflops_max']:.3g}), n={m['n']}"
        )
        if "fraction_of_peak" in m:
            line += f"; {m['fraction_of_peak']:.0%} of one device's share of the chip peak"
    failing = [c for c in result.comparisons if not c.ok]
    if failing:
        line += "; " + comparison_line(failing[0], True)
    return line
