"""Device results against the CPU reference: error figures and a verdict per tensor."""

from __future__ import annotations

from typing import Any

import torch


def compare(label: str, actual: Any, expected: Any, rtol: float, atol: float) -> dict[str, Any]:
    """Figures for one tensor: max abs/rel error, mismatched elements, and whether it passed.

    ``expected`` is the reference (float64 for floating outputs). Integer outputs must match
    exactly. An element passes when ``|error| <= atol * scale + rtol * |reference|``, where
    ``scale`` is the tensor's largest reference magnitude (at least 1): low-precision results that
    sum or cancel large terms (bf16 gradients) err in proportion to those terms, not to the small
    result. Relative error is reported over elements whose reference exceeds that absolute bound.
    """
    got = actual.detach().to("cpu")
    want = expected.detach().to("cpu")
    figures: dict[str, Any] = {"tensor": label, "rtol": rtol, "atol": atol, "total": want.numel()}
    if tuple(got.shape) != tuple(want.shape):
        problem = f"shape {tuple(got.shape)}, expected {tuple(want.shape)}"
        return {**figures, "ok": False, "problem": problem, "mismatched": want.numel()}
    if not want.is_floating_point() or (rtol == 0 and atol == 0):
        return {**figures, **_exact(got, want)}
    got64, want64 = got.double(), want.double()
    diff = (got64 - want64).abs()
    scale = _max(want64.abs()) or 1.0
    bound = atol * scale + rtol * want64.abs()
    mismatched = int((~(diff <= bound)).sum())  # NaN compares False: a mismatch
    return {
        **figures,
        "ok": mismatched == 0,
        "mismatched": mismatched,
        "max_abs": _max(diff),
        "max_rel": _max_relative(diff, want64, atol * scale),
        "scale": scale,
        "used": _max(diff / bound.clamp_min(1e-300)),  # worst error as a fraction of its bound
    }


def _exact(got: Any, want: Any) -> dict[str, Any]:
    """Element-wise equality without upcasting (the tensors may be large)."""
    wrong = got.to(want.dtype) != want
    count = int(wrong.sum())
    if count == 0:
        return {"ok": True, "mismatched": 0, "max_abs": 0.0}
    delta = (got[wrong].double() - want[wrong].double()).abs()
    return {"ok": False, "mismatched": count, "max_abs": _max(delta)}


def _max(values: Any) -> float:
    if values.numel() == 0:
        return 0.0
    return float(torch.nan_to_num(values, nan=float("inf")).max())


def _max_relative(diff: Any, reference: Any, floor: float) -> float:
    significant = reference.abs() > max(floor, 1e-30)
    if not bool(significant.any()):
        return 0.0
    return _max(diff[significant] / reference.abs()[significant])


def worst(comparisons: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The comparison that failed worst (or the largest error when all passed)."""
    if not comparisons:
        return None
    return max(comparisons, key=lambda c: (not c["ok"], c.get("max_rel", 0.0), c.get("max_abs", 0)))


def verdict(comparisons: list[dict[str, Any]], fallback: list[str] | None) -> str:
    """fail beats fell-back-to-CPU beats pass: wrong numbers matter most."""
    if not all(c["ok"] for c in comparisons):
        return "fail"
    if fallback:
        return "fallback"
    return "pass"
