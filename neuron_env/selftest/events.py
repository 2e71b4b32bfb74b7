"""Turning the worker's JSON events into result models, with a one-line message per case."""

from __future__ import annotations

from typing import Any

from neuron_env.selftest.models import (
    STATUSES,
    CaseResult,
    Comparison,
    DeviceInfo,
    Peak,
    Problem,
    Status,
)
from neuron_env.worker.exits import why_it_ended

_COMPARISON_KEYS = set(Comparison.__dataclass_fields__)
_INFO_KEYS = set(DeviceInfo.__dataclass_fields__)


def device_info(event: dict[str, Any]) -> DeviceInfo:
    info = event.get("info") or {}
    return DeviceInfo(**{k: v for k, v in info.items() if k in _INFO_KEYS})


def problem(event: dict[str, Any]) -> Problem:
    return Problem(
        str(event.get("kind", "error")), str(event.get("message", "")), event.get("hint") or ""
    )


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


def comparison(fields: dict[str, Any]) -> Comparison:
    """One compared tensor as the worker reported it (unknown keys are ignored)."""
    return Comparison(**{k: _figure(v) for k, v in fields.items() if k in _COMPARISON_KEYS})


def _figure(value: Any) -> Any:
    """The worker sends non-finite floats as text ("inf", "nan"): JSON has no such numbers."""
    if value in ("inf", "-inf", "nan"):
        return float(value)
    return value


def number(value: Any) -> float | None:
    """A timing or figure as a float; None when the worker sent none (or not a number)."""
    value = _figure(value)
    return float(value) if isinstance(value, int | float) else None


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


def comparison_line(c: Comparison, failed: bool) -> str:
    """``tensor: 3/10 off; max rel .., abs .. (rtol .., atol ..)`` for a failed comparison, the
    figures against the tolerance for one that passed."""
    if c.problem:
        return f"{c.tensor}: {c.problem}"
    if c.rtol == 0 and c.atol == 0:
        return f"{c.tensor}: {c.mismatched}/{c.total} elements differ" if failed else "exact"
    figures = f"max rel {(c.max_rel or 0):.1e}, abs {(c.max_abs or 0):.1e}"
    tolerance = f"rtol {c.rtol:g}, atol {c.atol:g}"
    if failed:
        return f"{c.tensor}: {c.mismatched}/{c.total} off; {figures} ({tolerance})"
    if c.used is None or c.scale is None:
        return f"{figures} ({tolerance})"
    # atol is scaled by the tensor's magnitude: an abs error above atol may be well within bound.
    bound = f"atol {c.atol:g} × scale {c.scale:.3g} + rtol {c.rtol:g} × |ref|"
    return f"{figures}: {share_of_bound(c.used)} of the bound ({bound})"


def share_of_bound(used: float) -> str:
    """The worst element's error as a share of its bound: ``19%``, ``<1%``."""
    return "<1%" if used < 0.01 else f"{used:.0%}"


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
