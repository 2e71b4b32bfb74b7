"""Running the evaluate worker in the target interpreter, with a hard timeout per stage.

The worker is started as ``python -I <worker dir>`` with a JSON request on stdin and reports JSON
lines. Every line must arrive within ``timeout`` seconds: loading the entry (and its CPU reference
run), the eager stage, the compile stage and each shape each get that long. A stage that hangs is
recorded as ``timeout`` and the worker's process group is killed; one that crashes the worker is an
``error``. Either way what was measured before is kept.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuron_env.command import LineTimeout, StreamingCommand
from neuron_env.errors import CommandFailed
from neuron_env.evaluate import events
from neuron_env.evaluate.entry import Entry, search_path
from neuron_env.evaluate.models import ModelInfo, StageResult
from neuron_env.selftest import events as selftest_events
from neuron_env.selftest.harness import protocol_problem, startup_failure
from neuron_env.selftest.models import DeviceInfo, Problem
from neuron_env.worker.exits import why_it_ended
from neuron_env.worker.interrupts import stop_on_interrupt
from neuron_env.worker.stream import MAX_LINE, EventStream, ProtocolError

WORKER_DIR = Path(__file__).resolve().with_name("worker")
WORKER = "evaluate worker"


@dataclass(frozen=True)
class Request:
    """What to evaluate, where and how."""

    python: Path
    entry: Entry
    device: str = "neuron"
    compile: bool = False
    shapes: tuple[tuple[int, ...], ...] = ()
    timeout: float = 600.0
    repeats: int = 5
    compile_backend: str | None = None
    seed: int = 0

    def payload(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "entry": self.entry.request(),
            "sys_path": search_path(),
            "compile": self.compile,
            "shapes": [list(s) for s in self.shapes],
            "repeats": self.repeats,
            "compile_backend": self.compile_backend,
            "stage_timeout": self.timeout,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class Progress:
    """``started`` (device found), ``start`` (a stage began: ``name``), ``stage`` (one finished)."""

    kind: str
    name: str = ""
    info: DeviceInfo | None = None
    result: StageResult | None = None


ProgressCallback = Callable[[Progress], None]


@dataclass
class Run:
    """What the worker reported."""

    info: DeviceInfo | None = None
    model: ModelInfo | None = None
    stages: list[StageResult] | None = None
    problem: Problem | None = None
    traceback: str = ""


def run_worker(request: Request, progress: ProgressCallback | None = None) -> Run:
    """Run the worker once; never raises for what the target does.

    Ctrl-C or SIGTERM kills the worker's process group and raises
    :class:`~neuron_env.errors.Interrupted`.
    """
    run = Run(stages=[])
    argv = [str(request.python), "-I", str(WORKER_DIR)]
    with stop_on_interrupt(WORKER):
        try:
            worker = StreamingCommand(argv, input=json.dumps(request.payload()), max_line=MAX_LINE)
        except CommandFailed as exc:
            run.problem = Problem("worker-failed", exc.message)
            return run
        with worker:
            _Reader(request, run, progress or (lambda _: None), worker).read()
    return run


class _Reader:
    """Follows the worker's events; a hung stage is ``timeout``, a crash ``error``.

    Each stage (loading the entry, eager, compile, each shape) has ``request.timeout`` seconds
    from the end of the one before, whatever else the worker prints meanwhile.
    """

    def __init__(
        self, request: Request, run: Run, report: ProgressCallback, worker: StreamingCommand
    ) -> None:
        self.request, self.run, self.report, self.worker = request, run, report, worker
        self.current: str | None = None
        self.started = time.monotonic()
        self.stream = EventStream(worker, request.timeout)

    def read(self) -> None:
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

    def _handle(self, event: dict[str, Any]) -> bool:
        """Record one event; True when the worker is finished."""
        kind = event.get("event")
        if kind == "hello":
            if self.run.info is not None:
                raise ProtocolError("said hello twice")
            self.run.info = selftest_events.device_info(event)
            self.stream.extend()
            self.report(Progress("started", info=self.run.info))
        elif kind == "fatal":
            self.run.problem = selftest_events.problem(event)
            self.run.traceback = str(event.get("traceback") or "")
            return True
        elif kind == "start":
            self.current, self.started = self._new(event, "started"), time.monotonic()
            self.report(Progress("start", name=self.current))
        elif kind == "model":
            if self.run.model is not None:
                raise ProtocolError("described the model twice")
            self.run.model = events.model_info(event)
            self.stream.extend()
        elif kind == "result":
            self._new(event, "reported")
            self._record(events.stage_result(event, time.monotonic() - self.started))
            self.stream.extend()
        elif kind == "done" and self._missing():
            raise ProtocolError("said it was done without a result for " + self._missing())
        return kind == "done"

    def _new(self, event: dict[str, Any], verb: str) -> str:
        """The event's stage, which must not have a result yet."""
        name = str(event["name"])
        assert self.run.stages is not None
        if name == "load" and verb == "started" and self.run.model is None:
            return name
        if name == "load" or any(s.name == name for s in self.run.stages):
            raise ProtocolError(f"{verb} {name!r} again")
        return name

    def _missing(self) -> str:
        """The stages every run must report that this one has not: a pass needs them all."""
        assert self.run.stages is not None
        done = {s.name for s in self.run.stages}
        required = ["eager", "compile"] if self.request.compile else ["eager"]
        missing = ([] if self.run.model is not None else ["load"]) + [
            name for name in required if name not in done
        ]
        return ", ".join(missing)

    def _broken(self, how: str) -> None:
        self.worker.kill()
        self.run.problem = protocol_problem(WORKER, how, self.request.python)

    def _record(self, result: StageResult) -> None:
        assert self.run.stages is not None
        self.run.stages.append(result)
        self.current = None
        self.report(Progress("stage", name=result.name, result=result))

    def _timed_out(self) -> None:
        self.worker.kill()
        seconds = f"{self.request.timeout:g} s"
        if self.run.info is None:
            self.run.problem = Problem(
                "worker-timeout",
                f"The {WORKER} did not start within {seconds} (importing torch or initialising "
                "the device hung); it was killed.",
                "Run 'python -c \"import torch\"' in the target environment to see where it "
                "stops, or raise --timeout.",
            )
        elif self.current in (None, "load"):
            self.run.problem = Problem(
                "entry-timeout",
                f"Loading {self.request.entry.text} and running it once on the CPU did not finish "
                f"within {seconds}; the worker was killed.",
                "Check the entry for a hang, or raise --timeout for a large model.",
            )
        else:
            message = f"did not finish within {seconds}; the worker was killed"
            self._record(StageResult(self.current, "timeout", message, wall_s=self._elapsed()))

    def _ended(self) -> None:
        code = self.worker.wait(timeout=10)
        tail = self.worker.stderr_tail()
        if self.run.info is None and self.run.problem is None:
            self.run.problem = startup_failure(code, tail, self.request.python, WORKER)
        elif self.current == "load":
            self.run.problem = Problem(
                "worker-crashed",
                f"The {WORKER} exited with code {code} while loading "
                f"{self.request.entry.text}{why_it_ended(code, tail)}",
                "Run the entry directly in the target interpreter to see why.",
            )
        elif self.current is not None:
            why = why_it_ended(code, tail)
            message = f"the worker exited with code {code} during this stage{why}"
            self._record(StageResult(self.current, "error", message, wall_s=self._elapsed()))
        elif self.run.problem is None and self._missing():  # between stages: still no pass
            self.run.problem = Problem(
                "worker-crashed",
                f"The {WORKER} exited with code {code} before reporting "
                f"{self._missing()}{why_it_ended(code, tail)}",
                "Run the entry directly in the target interpreter to see why.",
            )

    def _elapsed(self) -> float:
        return time.monotonic() - self.started
