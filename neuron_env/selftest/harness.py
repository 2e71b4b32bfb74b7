"""Running the self-test worker in the target interpreter, with a hard timeout per case.

The worker is started as ``python -I <neuron_env>/worker/target selftest`` with a JSON request on
stdin and reports JSON lines (``worker/protocol.py``); following them is the shared reader's job
(``neuron_env/worker/session.py``). Each case must finish within ``timeout`` seconds: a case that
hangs is recorded as ``timeout``, one that crashes the worker as ``error``, and the worker's process
group is killed. The device is then suspect: the cases after it are reported as not run, unless
``keep_going``, where a fresh worker carries on with them. So a hung or crashing runtime never
hangs or crashes neuron-env itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuron_env.command import StreamingCommand
from neuron_env.errors import CommandFailed
from neuron_env.frozen import frozen
from neuron_env.selftest import events
from neuron_env.selftest.models import CaseResult, Peak
from neuron_env.selftest.worker.cases import split_variant
from neuron_env.worker.interrupts import stop_on_interrupt
from neuron_env.worker.problems import protocol_problem, startup_failure
from neuron_env.worker.results import DeviceInfo, Problem
from neuron_env.worker.session import EventReader, start_worker
from neuron_env.worker.stream import ProtocolError, parse_event

__all__ = [
    "Progress",
    "ProgressCallback",
    "Request",
    "Run",
    "parse_event",
    "protocol_problem",
    "run_variants",
    "startup_failure",
]

WORKER_DIR = Path(__file__).resolve().with_name("worker")
WORKER = "self-test worker"


@frozen
class Progress:
    """A progress report: ``started`` (device found), ``case`` (one finished), ``restart``."""

    kind: str
    index: int = 0
    total: int = 0
    name: str = ""
    result: CaseResult | None = None
    info: DeviceInfo | None = None


ProgressCallback = Callable[[Progress], None]


@dataclass
class Run:
    """What the worker(s) reported so far."""

    variants: tuple[str, ...]
    info: DeviceInfo | None = None
    results: list[CaseResult] = field(default_factory=list)
    problem: Problem | None = None


@frozen
class Request:
    python: Path
    device: str
    timeout: float
    compile_backend: str | None = None
    repeats: int = 5
    peak: Peak | None = None
    keep_going: bool = False  # after a hang or a crash, run the remaining variants anyway


def run_variants(
    request: Request, variants: Sequence[str], progress: ProgressCallback | None = None
) -> Run:
    """Run ``variants`` in worker processes until each has a result or the worker cannot start.

    Ctrl-C or SIGTERM kills the worker's process group and raises
    :class:`~neuron_env.errors.Interrupted`.
    """
    run = Run(tuple(variants))
    report = progress or (lambda _: None)
    pending = list(variants)
    with stop_on_interrupt(WORKER):
        while pending and run.problem is None:
            batch = _next_batch(pending)
            unfinished = _run_batch(request, batch, run, report)
            pending = unfinished + pending[len(batch) :]
            if pending and unfinished:
                if not request.keep_going:  # a device that hung or crashed is suspect
                    _leave_out(run, pending, report)
                    break
                report(Progress("restart", name=unfinished[0]))
    return run


def _leave_out(run: Run, pending: list[str], report: ProgressCallback) -> None:
    """Record ``pending`` as not run, saying which case hung or crashed."""
    after = run.results[-1]
    for name in pending:
        run.results.append(events.not_run(name, after))
        total = len(run.variants)
        report(Progress("case", len(run.results), total, name, run.results[-1]))


def _next_batch(pending: list[str]) -> list[str]:
    """Collectives run alone: their ranks are separate processes that need the devices free."""
    if _isolated(pending[0]):
        return pending[:1]
    batch = []
    for name in pending:
        if _isolated(name):
            break
        batch.append(name)
    return batch


def _isolated(name: str) -> bool:
    case, _, _ = split_variant(name)
    return case.kind == "collective"


def _run_batch(request: Request, batch: list[str], run: Run, report: ProgressCallback) -> list[str]:
    """Run one worker over ``batch``; returns the variants it left unfinished (to restart)."""
    payload = {
        "device": request.device,
        "variants": batch,
        "compile_backend": request.compile_backend,
        "repeats": request.repeats,
        "case_timeout": request.timeout,
    }
    try:
        worker = start_worker(request.python, WORKER_DIR, payload)
    except CommandFailed as exc:
        run.problem = Problem("worker-failed", exc.message)
        return []
    with worker:
        reader = _BatchReader(request, batch, run, report, worker)
        reader.read()
        return reader.unfinished


class _BatchReader(EventReader):
    """Follows one worker over a batch; marks a hung case ``timeout`` and a crash ``error``.

    Each case has ``request.timeout`` seconds from the end of the one before (the first: from
    ``hello``, which itself must come that soon), whatever else the worker prints meanwhile.
    """

    worker_name = WORKER

    def __init__(
        self,
        request: Request,
        batch: list[str],
        run: Run,
        report: ProgressCallback,
        worker: StreamingCommand,
    ) -> None:
        super().__init__(worker, run, request.python, request.timeout)
        self.request, self.suite, self.report = request, run, report
        self.remaining = list(batch)
        self.unfinished: list[str] = []  # what a fresh worker would have to carry on with

    def on_hello(self, info: DeviceInfo) -> None:
        self.report(Progress("started", total=len(self.suite.variants), info=info))

    def on_event(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "start":
            self.begin(self._pending(event, "started"))
        elif kind == "result":
            self._pending(event, "reported")
            self._record(events.case_result(event, self.elapsed(), self.request.peak))
            self.stream.extend()

    def missing(self) -> list[str]:
        return self.remaining

    def _pending(self, event: dict[str, Any], verb: str) -> str:
        """The event's variant, which must be one this worker still owes a result for."""
        name = event["name"]
        if name not in self.remaining:
            raise ProtocolError(f"{verb} {name!r}, which it was not asked for or had finished")
        return str(name)

    def _record(self, result: CaseResult) -> None:
        self.suite.results.append(result)
        if result.name in self.remaining:
            self.remaining.remove(result.name)
        self.current = None
        index = len(self.suite.results)
        self.report(Progress("case", index, len(self.suite.variants), result.name, result))

    def on_timeout(self) -> None:
        name = self.current or self.remaining[0]
        self._record(events.timed_out(name, self.request.timeout, self.elapsed()))
        self.unfinished = list(self.remaining)

    def on_exit(self, code: int | None, stderr_tail: str) -> None:
        if not self.remaining:
            return
        name = self.current or self.remaining[0]
        self._record(events.crashed(name, code, stderr_tail, self.elapsed()))
        self.unfinished = list(self.remaining)
