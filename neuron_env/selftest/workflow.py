"""``smoke`` and ``selftest``: the device's numerics against the CPU, in the target interpreter."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.device_gate import device_run_target
from neuron_env.errors import BadInput
from neuron_env.frozen import frozen

if TYPE_CHECKING:
    from neuron_env.progress import ProgressFactory
    from neuron_env.selftest import CaseListing, Peak, ProgressCallback, SmokeResult, SuiteResult

    #: Opens the display of the device levels' progress (entered only while they run): smoke and
    #: selftest take it, and so do doctor's and preflight's device levels.
    DeviceProgress = ProgressFactory[ProgressCallback | None]

DEFAULT_TIMEOUT = 300.0


@frozen(kw_only=True)
class SmokeRequest:
    """The smoke test: where it runs (``python`` None: the active virtualenv, else our own);
    ``matrix_dirs`` tell the held-cores gate the chips of newer releases."""

    python: Path | None = None
    device: str = "neuron"
    timeout: float = DEFAULT_TIMEOUT
    keep_going: bool = False
    matrix_dirs: Sequence[Path] = ()
    progress: DeviceProgress | None = None


@frozen(kw_only=True)
class SelftestRequest:
    """The kernel self-test: which cases (``level``, ``only``), where, and the chip whose peak
    throughput the perf cases are measured against (``chip`` or ``instance_type``, from the
    matrix in ``matrix_dirs``)."""

    level: str = "quick"
    only: Sequence[str] = ()
    python: Path | None = None
    device: str = "neuron"
    timeout: float = DEFAULT_TIMEOUT
    allow_fallback: bool = False
    chip: str | None = None
    instance_type: str | None = None
    compile_backend: str | None = None
    repeats: int = 5
    keep_going: bool = False
    matrix_dirs: Sequence[Path] = ()
    progress: DeviceProgress | None = None


def run_smoke_test(request: SmokeRequest) -> SmokeResult:
    """Bad input (an unknown device, no such interpreter) is said before the worker starts."""
    from neuron_env.selftest import run_smoke

    target = device_run_target(request.python, request.device, request.matrix_dirs)
    with _progress(request.progress) as report:
        return run_smoke(
            target,
            device=request.device,
            timeout=request.timeout,
            keep_going=request.keep_going,
            progress=report,
        )


def run_selftest(request: SelftestRequest) -> SuiteResult:
    """The cases of the level, narrowed by ``only``; bad input (no case matches, an unknown
    device or chip) is said before the worker starts."""
    from neuron_env.selftest import run_suite, select_variants

    select_variants(request.level, request.only)
    target = device_run_target(request.python, request.device, request.matrix_dirs)
    peak = _peak(request)
    with _progress(request.progress) as report:
        return run_suite(
            target,
            level=request.level,
            device=request.device,
            only=request.only,
            timeout=request.timeout,
            compile_backend=request.compile_backend,
            repeats=request.repeats,
            allow_fallback=request.allow_fallback,
            peak=peak,
            keep_going=request.keep_going,
            progress=report,
        )


def list_cases(level: str) -> CaseListing:
    """The cases ``level`` runs, and what each higher level adds (``selftest --list``)."""
    from neuron_env.selftest import CASES, LEVELS, CaseListing

    allowed = LEVELS[: LEVELS.index(level) + 1]
    higher = LEVELS[LEVELS.index(level) + 1 :]
    added = tuple((h, tuple(c.id for c in CASES if c.level == h)) for h in higher)
    return CaseListing(level, tuple(c for c in CASES if c.level in allowed), added)


def _peak(request: SelftestRequest) -> Peak | None:
    if request.chip is None and request.instance_type is None:
        return None
    from neuron_env.matrix import load_matrix
    from neuron_env.selftest.peak import peak_for

    if request.chip is not None and request.instance_type is not None:
        raise BadInput("Give either --chip or --instance-type, not both.")
    release = load_matrix(list(request.matrix_dirs)).latest()
    return peak_for(release, chip=request.chip, instance_type=request.instance_type)


def _progress(factory: DeviceProgress | None) -> AbstractContextManager[ProgressCallback | None]:
    return factory() if factory is not None else nullcontext(None)
