"""One worker process, followed from its start to its end: what every worker run shares.

:func:`start_worker` launches ``python -I <neuron_env>/worker/target JOB`` (the one entry of every
worker, :data:`ENTRY`) in its own process group with the request
on stdin; :class:`EventReader` follows its events until it is done, hangs, dies or breaks the
protocol. The reader owns the shared part — the deadline, ``hello`` (once), ``fatal``, ``done``
(only once nothing is owed), a worker that never starts, one that breaks the protocol — and asks
its subclass about the rest: its own events, what a finished run must have reported, and what a
hang or an exit mid-run means.
"""

from __future__ import annotations

import json
import time
import weakref
from pathlib import Path
from typing import Any, Protocol

from neuron_env.command import LineTimeout, StreamingCommand
from neuron_env.errors import CommandFailed
from neuron_env.facts import below_probe_floor
from neuron_env.interpreter import version_of
from neuron_env.worker.events import device_info, problem
from neuron_env.worker.problems import (
    did_not_start,
    protocol_problem,
    startup_failure,
    too_old_python,
)
from neuron_env.worker.results import DeviceInfo, Problem
from neuron_env.worker.stream import MAX_LINE, EventStream, ProtocolError

ENTRY = Path(__file__).resolve().with_name("target")
"""The one entry point of every worker (``worker/target/__main__.py``), run with the job's name."""

_live: weakref.WeakSet[StreamingCommand] = weakref.WeakSet()
_stopping = False


def start_worker(python: Path, worker_dir: Path, payload: dict[str, Any]) -> StreamingCommand:
    """Start the worker in ``python`` (raises :class:`~neuron_env.errors.CommandFailed` when it
    cannot be run, or once :func:`stop_all_workers` was called); use it as a ``with`` block, which
    kills its process group on the way out."""
    argv = worker_argv(python, worker_dir, "-I")
    if _stopped():
        raise CommandFailed(argv, "interrupted: no further worker is started")
    worker = StreamingCommand(argv, input=json.dumps(payload), max_line=MAX_LINE)
    _live.add(worker)
    if _stopped():  # stopped while it started (from another thread): it never runs
        with worker:  # killed, reaped, closed
            pass
        raise CommandFailed(argv, "interrupted: no further worker is started")
    return worker


def worker_argv(python: Path, worker_dir: Path, *options: str) -> list[str]:
    """``python [OPTIONS] <neuron_env>/worker/target JOB``: the job is the command whose
    ``worker/`` folder is ``worker_dir`` (``selftest``, ``evaluate``, ``collectives``)."""
    return [str(python), *options, str(ENTRY), worker_dir.parent.name]


def _stopped() -> bool:
    return _stopping


def stop_all_workers() -> None:
    """Kill every worker's process group, wherever it runs (e.g. doctor's device levels run in a
    thread that signals cannot reach), and start no new one until :func:`allow_workers`."""
    global _stopping
    _stopping = True
    for worker in list(_live):
        worker.kill()


def allow_workers() -> None:
    """Undo :func:`stop_all_workers` (the interrupted operation has ended)."""
    global _stopping
    _stopping = False


class RunState(Protocol):
    """What a reader fills in on the caller's run: the device found and why it stopped."""

    info: DeviceInfo | None
    problem: Problem | None


class EventReader:
    """Follows one worker's events; subclasses override the ``on_*`` hooks and :meth:`missing`.

    Every step has ``timeout`` seconds; a subclass calls ``self.stream.extend()`` when one is done
    (``hello`` does it here). Output that is not progress never extends it.
    """

    worker_name = "worker"

    def __init__(
        self, worker: StreamingCommand, run: RunState, python: Path, timeout: float
    ) -> None:
        self.worker, self.run, self.python, self.timeout = worker, run, python, timeout
        self.stream = EventStream(worker, timeout)
        self.said_hello = False
        self.current: str | None = None  # the step under way
        self.started = time.monotonic()

    def read(self) -> None:
        """Follow the worker until it is done, or what ended it is recorded."""
        while True:
            try:
                event = self.stream.next_event()
                if event is None:
                    self._ended()
                    return
                if self._handle(event):
                    return
            except LineTimeout:
                self._timed_out()
                return
            except ProtocolError as exc:
                self._broken(str(exc))
                return
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                self._broken(f"sent an event neuron-env cannot read ({exc!r})")
                return

    def begin(self, name: str) -> None:
        """A step started: it is the one a hang or a crash is blamed on."""
        self.current, self.started = name, time.monotonic()

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    # --- hooks ---------------------------------------------------------------------------------

    def on_hello(self, info: DeviceInfo) -> None:
        """The worker found its device."""

    def on_fatal(self, event: dict[str, Any]) -> None:
        """The worker said why it cannot go on (already the run's problem)."""

    def on_event(self, kind: str, event: dict[str, Any]) -> None:
        """Any other event; raise :class:`ProtocolError` for one that breaks the protocol."""

    def missing(self) -> list[str]:
        """What the worker still owes: ``done`` before these is a protocol error."""
        return []

    def on_timeout(self) -> None:
        """A step did not finish in time, after ``hello`` (the worker has been killed)."""

    def on_exit(self, code: int | None, stderr_tail: str) -> None:
        """The worker exited without ``done``, after ``hello`` (or after a problem)."""

    # --- the shared part -----------------------------------------------------------------------

    def _handle(self, event: dict[str, Any]) -> bool:
        """Record one event; True when the worker is finished."""
        kind = event.get("event")
        if kind == "hello":
            if self.said_hello:
                raise ProtocolError("said hello twice")
            self.said_hello = True
            self.run.info = device_info(event)
            self.stream.extend()
            self.on_hello(self.run.info)
        elif kind == "fatal":
            self.run.problem = problem(event)
            self.on_fatal(event)
            return True
        elif kind == "done":
            owed = self.missing()
            if owed:
                raise ProtocolError("said it was done without a result for " + ", ".join(owed))
            return True
        else:
            self.on_event(str(kind), event)
        return False

    def _broken(self, how: str) -> None:
        self.worker.kill()
        self.run.problem = protocol_problem(self.worker_name, how, self.python)

    def _timed_out(self) -> None:
        self.worker.kill()
        if self.run.info is None:
            self.run.problem = did_not_start(self.worker_name, self.timeout)
        else:
            self.on_timeout()

    def _why_it_did_not_start(self, code: int | None, tail: str) -> Problem:
        """Its exit code and last words, or, from an interpreter too old for the worker (a
        Python 2.7 says "Unknown option: -I"), that it is too old."""
        if code is not None and code > 0:
            version = version_of(self.python)
            if version is not None and below_probe_floor(version):
                return too_old_python(version, self.python, self.worker_name)
        return startup_failure(code, tail, self.python, self.worker_name)

    def _ended(self) -> None:
        code = self.worker.wait(timeout=10)
        tail = self.worker.stderr_tail()
        if self.run.info is None and self.run.problem is None:
            self.run.problem = self._why_it_did_not_start(code, tail)
        else:
            self.on_exit(code, tail)
