"""Device smoke test and kernel self-test suite.

neuron-env's side (this package) selects cases, runs the worker (``worker/``) in the *target*
interpreter with a hard timeout per case, and turns what it reports into :class:`SuiteResult`.
The worker needs only the standard library and torch there.

Library API (what ``neuron-env doctor --level 1/2`` calls)::

    result = run_smoke(python, device="neuron", timeout=300)
    result.ok, result.summary, result.details, result.cases

    result = run_suite(python, level="standard", device="neuron", only=(), timeout=300)
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from importlib import import_module
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from neuron_env.selftest.harness import Progress, ProgressCallback, Request
    from neuron_env.selftest.models import CaseListing, CaseResult, Peak, SmokeResult, SuiteResult
    from neuron_env.selftest.worker.cases import CASES, LEVELS, Case
    from neuron_env.worker.devices import check_device
    from neuron_env.worker.results import STATUSES, Comparison, DeviceInfo, Problem, Status

_Result = TypeVar("_Result", bound="SuiteResult")

# The names below load their module on first use (PEP 562): a command that only needs one of
# this package's modules (doctor's progress, the CLI's options) does not import the harness, the
# result models and the case table.
_SUBMODULE = {
    "Progress": "neuron_env.selftest.harness",
    "ProgressCallback": "neuron_env.selftest.harness",
    "CaseListing": "neuron_env.selftest.models",
    "CaseResult": "neuron_env.selftest.models",
    "Peak": "neuron_env.selftest.models",
    "SmokeResult": "neuron_env.selftest.models",
    "SuiteResult": "neuron_env.selftest.models",
    "CASES": "neuron_env.selftest.worker.cases",
    "LEVELS": "neuron_env.selftest.worker.cases",
    "Case": "neuron_env.selftest.worker.cases",
    "check_device": "neuron_env.worker.devices",
    "STATUSES": "neuron_env.worker.results",
    "Comparison": "neuron_env.worker.results",
    "DeviceInfo": "neuron_env.worker.results",
    "Problem": "neuron_env.worker.results",
    "Status": "neuron_env.worker.results",
}


def __getattr__(name: str) -> Any:
    module = _SUBMODULE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "CASES",
    "LEVELS",
    "STATUSES",
    "Case",
    "CaseListing",
    "CaseResult",
    "Comparison",
    "DeviceInfo",
    "Peak",
    "Problem",
    "Progress",
    "ProgressCallback",
    "SmokeResult",
    "Status",
    "SuiteResult",
    "check_device",
    "run_smoke",
    "run_suite",
    "select_variants",
]

DEFAULT_TIMEOUT = 300.0


def select_variants(level: str, only: Sequence[str] = ()) -> list[str]:
    """The variants ``level`` runs, narrowed by ``only`` patterns; bad input when none match."""
    from neuron_env.errors import BadInput
    from neuron_env.invocation import command
    from neuron_env.selftest.worker.cases import CASES, LEVELS, variants_for

    if level not in LEVELS:
        raise BadInput(f"Unknown level {level!r}.", hint=f"Use one of: {', '.join(LEVELS)}.")
    chosen = variants_for(level, tuple(only))
    if chosen:
        return chosen
    wider = variants_for(LEVELS[-1], tuple(only))
    if wider:
        needed = next(c.level for c in CASES for v in c.variants() if v == wider[0])
        raise BadInput(
            f"{' '.join(only)} selects no case of level {level}; {wider[0]} is in level {needed}.",
            hint=f"Add --level {needed}.",
        )
    raise BadInput(
        f"No self-test case matches {', '.join(repr(p) for p in only)}.",
        hint=f"List the cases with '{command('selftest', '--list')}'.",
    )


def run_suite(
    python: Path,
    *,
    level: str = "quick",
    device: str = "neuron",
    only: Sequence[str] = (),
    timeout: float = DEFAULT_TIMEOUT,
    compile_backend: str | None = None,
    repeats: int = 5,
    allow_fallback: bool = False,
    peak: Peak | None = None,
    keep_going: bool = False,
    progress: ProgressCallback | None = None,
) -> SuiteResult:
    """Run the self-test suite at ``level`` in ``python`` (the target interpreter).

    Never raises for what the target does (no torch, no device, a hang, a crash): those come back
    as ``result.problem`` or as case statuses, and ``result.ok`` is False. Raises
    :class:`~neuron_env.errors.BadInput` for a bad ``level``, ``device``, ``only`` or ``timeout``.
    ``timeout`` bounds each case (and the worker's start); ``progress`` is called as cases finish.
    After a case hangs or the worker dies the rest are reported ``skipped`` (not run), unless
    ``keep_going``.
    """
    from neuron_env.selftest.harness import Request
    from neuron_env.selftest.models import SuiteResult
    from neuron_env.worker.devices import check_device, check_timeout

    variants = select_variants(level, only)
    request = Request(
        python, check_device(device), check_timeout(timeout), compile_backend, repeats, peak,
        keep_going,
    )  # fmt: skip
    return _timed_run(
        SuiteResult, request, variants, progress, level=level, device=device, python=str(python),
        allow_fallback=allow_fallback, peak=peak,
    )  # fmt: skip


def run_smoke(
    python: Path,
    *,
    device: str = "neuron",
    timeout: float = DEFAULT_TIMEOUT,
    keep_going: bool = False,
    progress: ProgressCallback | None = None,
) -> SmokeResult:
    """The smoke test: is the device there, how many, and does a matmul match the CPU in fp32 and
    bf16 (first call and steady state timed apart; ops that fell back to CPU must be none)?

    Like :func:`run_suite`, it reports rather than raises for anything the target does.
    """
    from neuron_env.selftest.harness import Request
    from neuron_env.selftest.models import SmokeResult
    from neuron_env.selftest.worker.cases import SMOKE_VARIANTS
    from neuron_env.worker.devices import check_device, check_timeout

    request = Request(python, check_device(device), check_timeout(timeout), keep_going=keep_going)
    return _timed_run(
        SmokeResult, request, SMOKE_VARIANTS, progress, level="smoke", device=device,
        python=str(python),
    )  # fmt: skip


def _timed_run(
    result: type[_Result],
    request: Request,
    variants: Sequence[str],
    progress: ProgressCallback | None,
    **fields: Any,
) -> _Result:
    """Run ``variants`` in the worker and say how it went as ``result`` (with ``fields``): the
    device found, one result per variant, why it stopped if it did, and the wall time."""
    from neuron_env.selftest.harness import run_variants

    start = time.monotonic()
    run = run_variants(request, variants, progress)
    return result(
        info=run.info,
        cases=tuple(run.results),
        problem=run.problem,
        wall_s=time.monotonic() - start,
        **fields,
    )
