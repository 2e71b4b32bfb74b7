"""The events every worker sends, as result models: the device (``hello``), why it cannot go on
(``fatal``), compared tensors and figures, and the one-line text of a comparison."""

from __future__ import annotations

import math
from typing import Any

from neuron_env.invocation import program
from neuron_env.worker.results import Comparison, DeviceInfo, Problem

_COMPARISON_KEYS = set(Comparison.__dataclass_fields__)
_INFO_KEYS = set(DeviceInfo.__dataclass_fields__)


def device_info(event: dict[str, Any]) -> DeviceInfo:
    info = event.get("info") or {}
    return DeviceInfo(**{k: v for k, v in info.items() if k in _INFO_KEYS})


def problem(event: dict[str, Any]) -> Problem:
    hint = str(event.get("hint") or "")
    return Problem(str(event.get("kind", "error")), str(event.get("message", "")), runnable(hint))


def runnable(hint: str) -> str:
    """The worker runs in the target interpreter and cannot know how neuron-env was started: its
    quoted commands say 'neuron-env ...', named here as a fresh shell finds this neuron-env."""
    return hint.replace("'neuron-env ", f"'{program()} ")


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


def finite(value: Any) -> Any:
    """Strict JSON has no NaN or infinity: such figures are written as text (also for evaluate)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return value
