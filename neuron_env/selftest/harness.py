"""Running the worker in the target interpreter, with a hard timeout per case.

The worker is started as ``python -I <worker dir>`` with a JSON request on stdin and reports JSON
lines (``worker/protocol.py``). Every line must arrive within ``timeout`` seconds: a case that hangs
is recorded as ``timeout``, the worker's process group is killed, and a fresh worker carries on with
the cases after it. A worker that crashes mid-case marks that case ``error`` and is restarted the
same way. So a hung or crashing runtime costs one case, never the run, and never neuron-env itself.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuron_env.command import LineTimeout, StreamingCommand
from neuron_env.errors import CommandFailed
from neuron_env.selftest import events
from neuron_env.selftest.models import CaseResult, DeviceInfo, Peak, Problem
from neuron_env.selftest.worker.cases import split_variant
from neuron_env.worker.exits import signal_name, why_it_ended
from neuron_env.worker.interrupts import stop_on_interrupt
from neuron_env.worker.stream import MAX_LINE, EventStream, ProtocolError, parse_event

__all__ = ["Progress", "ProgressCallback", "Request", "Run", "parse_event", "run_variants"]

WORKER_DIR = Path(__file__).resolve().with_name("worker")
WORKER = "self-test worker"


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
    argv = [str(request.python), "-I", str(WORKER_DIR)]
    try:
        worker = StreamingCommand(argv, input=json.dumps(payload), max_line=MAX_LINE)
    except CommandFailed as exc:
        run.problem = Problem("worker-failed", exc.message)
        return []
    with worker:
        return _BatchReader(request, batch, run, report, worker).read()


class _BatchReader:
    """Follows one worker's events; marks a hung case ``timeout`` and a crash ``error``.

    Each case has ``request.timeout`` seconds from the end of the one before (the first: from
    ``hello``, which itself must come that soon), whatever else the worker prints meanwhile.
    """

    def __init__(
        self,
        request: Request,
        batch: list[str],
        run: Run,
        report: ProgressCallback,
        worker: StreamingCommand,
    ) -> None:
        self.request, self.batch, self.run, self.report, self.worker = (
            request,
            batch,
            run,
            report,
            worker,
        )
        self.remaining = list(batch)
        self.current: str | None = None
        self.started = time.monotonic()
        self.stream = EventStream(worker, request.timeout)
        self.said_hello = False

    def read(self) -> list[str]:
        while True:
            try:
                event = self.stream.next_event()
                if event is None:
                    return self._ended()
                if self._handle(event):
                    return []
            except LineTimeout:
                return self._timed_out()
            except ProtocolError as exc:
                return self._broken(str(exc))
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                return self._broken(f"sent an event neuron-env cannot read ({exc!r})")

    def _handle(self, event: dict[str, Any]) -> bool:
        """Record one event; True when the worker is finished."""
        kind = event.get("event")
        if kind == "hello":
            if self.said_hello:
                raise ProtocolError("said hello twice")
            self.said_hello = True
            self.run.info = events.device_info(event)
            self.stream.extend()
            self.report(Progress("started", total=len(self.run.variants), info=self.run.info))
        elif kind == "fatal":
            self.run.problem = events.problem(event)
            return True
        elif kind == "start":
            self.current, self.started = self._pending(event, "started"), time.monotonic()
        elif kind == "result":
            self._pending(event, "reported")
            self._record(events.case_result(event, self._elapsed(), self.request.peak))
            self.stream.extend()
        elif kind == "done" and self.remaining:
            raise ProtocolError(
                "said it was done without a result for " + ", ".join(self.remaining)
            )
        return kind == "done"

    def _pending(self, event: dict[str, Any], verb: str) -> str:
        """The event's variant, which must be one this worker still owes a result for."""
        name = event["name"]
        if name not in self.remaining:
            raise ProtocolError(f"{verb} {name!r}, which it was not asked for or had finished")
        return str(name)

    def _record(self, result: CaseResult) -> None:
        self.run.results.append(result)
        if result.name in self.remaining:
            self.remaining.remove(result.name)
        self.current = None
        index = len(self.run.results)
        self.report(Progress("case", index, len(self.run.variants), result.name, result))

    def _elapsed(self) -> float:
        return time.monotonic() - self.started

    def _broken(self, how: str) -> list[str]:
        self.worker.kill()
        self.run.problem = protocol_problem(WORKER, how, self.request.python)
        return []

    def _timed_out(self) -> list[str]:
        self.worker.kill()
        if self.run.info is None:
            self.run.problem = Problem(
                "worker-timeout",
                f"The {WORKER} did not start within {self.request.timeout:g} s "
                "(importing torch or initialising the device hung); it was killed.",
                "Run 'python -c \"import torch\"' in the target environment to see where it "
                "stops, or raise --timeout.",
            )
            return []
        name = self.current or self.remaining[0]
        self._record(events.timed_out(name, self.request.timeout, self._elapsed()))
        return list(self.remaining)

    def _ended(self) -> list[str]:
        code = self.worker.wait(timeout=10)
        tail = self.worker.stderr_tail()
        if self.run.info is None and self.run.problem is None:
            self.run.problem = startup_failure(code, tail, self.request.python)
            return []
        if not self.remaining:
            return []
        name = self.current or self.remaining[0]
        self._record(events.crashed(name, code, tail, self._elapsed()))
        return list(self.remaining)


def protocol_problem(worker: str, how: str, python: Path) -> Problem:
    """A worker that broke the protocol (forged, corrupted or flooded events): nothing it said
    after that is trusted."""
    return Problem(
        "worker-protocol",
        f"The {worker} in {python} {how}; it was stopped, and the run cannot pass.",
        "Something in the target environment writes to the worker's event stream, or --python "
        f"is not a Python interpreter: check that '{python} -c \"import torch\"' runs cleanly.",
    )


def startup_failure(
    code: int | None, tail: str, python: Path, worker: str = "self-test worker"
) -> Problem:
    """A worker that exited before its ``hello``: its exit code and last lines of stderr (or the
    signal that killed it)."""
    last = [line for line in tail.strip().splitlines() if line.strip()][-3:]
    said = (": " + " / ".join(s.strip() for s in last)) if last else ""
    if signal_name(code) is not None:
        said = why_it_ended(code, tail)
    return Problem(
        "worker-failed",
        f"The {worker} exited with code {code} in {python} before reporting{said}",
        "Check that this interpreter runs: '" + str(python) + ' -c "import torch"\'.',
    )
