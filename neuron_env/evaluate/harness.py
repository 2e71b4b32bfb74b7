"""Running the evaluate worker in the target interpreter, with a hard timeout per stage.

The worker is started as ``python -I <neuron_env>/worker/target evaluate`` with a JSON request on
stdin and reports JSON lines, followed by the shared reader (``neuron_env/worker/session.py``).
Loading the entry (and its CPU reference run), the eager stage, the compile stage and each shape
each get ``timeout`` seconds. A stage that hangs is recorded as ``timeout`` and the worker's process
group is killed; one that crashes the worker is an ``error``. Either way what was measured before is
kept.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuron_env.command import StreamingCommand
from neuron_env.errors import CommandFailed
from neuron_env.evaluate import events
from neuron_env.evaluate.entry import Entry, search_path
from neuron_env.evaluate.models import ModelInfo, StageResult
from neuron_env.frozen import frozen
from neuron_env.worker.exits import why_it_ended
from neuron_env.worker.interrupts import stop_on_interrupt
from neuron_env.worker.results import DeviceInfo, Problem
from neuron_env.worker.session import EventReader, start_worker
from neuron_env.worker.stream import ProtocolError

WORKER_DIR = Path(__file__).resolve().with_name("worker")
WORKER = "evaluate worker"


@frozen
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


@frozen
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
    with stop_on_interrupt(WORKER):
        try:
            worker = start_worker(request.python, WORKER_DIR, request.payload())
        except CommandFailed as exc:
            run.problem = Problem("worker-failed", exc.message)
            return run
        with worker:
            _Reader(request, run, progress or (lambda _: None), worker).read()
    return run


class _Reader(EventReader):
    """Follows the worker's events; a hung stage is ``timeout``, a crash ``error``.

    Each stage (loading the entry, eager, compile, each shape) has ``request.timeout`` seconds
    from the end of the one before, whatever else the worker prints meanwhile.
    """

    worker_name = WORKER

    def __init__(
        self, request: Request, run: Run, report: ProgressCallback, worker: StreamingCommand
    ) -> None:
        super().__init__(worker, run, request.python, request.timeout)
        self.request, self.evaluation, self.report = request, run, report

    @property
    def stages(self) -> list[StageResult]:
        assert self.evaluation.stages is not None
        return self.evaluation.stages

    def on_hello(self, info: DeviceInfo) -> None:
        self.report(Progress("started", info=info))

    def on_fatal(self, event: dict[str, Any]) -> None:
        self.evaluation.traceback = str(event.get("traceback") or "")

    def on_event(self, kind: str, event: dict[str, Any]) -> None:
        if kind == "start":
            self.begin(self._new(event, "started"))
            self.report(Progress("start", name=str(self.current)))
        elif kind == "model":
            if self.evaluation.model is not None:
                raise ProtocolError("described the model twice")
            self.evaluation.model = events.model_info(event)
            self.stream.extend()
        elif kind == "result":
            self._new(event, "reported")
            self._record(events.stage_result(event, self.elapsed()))
            self.stream.extend()

    def _new(self, event: dict[str, Any], verb: str) -> str:
        """The event's stage, which must not have a result yet."""
        name = str(event["name"])
        if name == "load" and verb == "started" and self.evaluation.model is None:
            return name
        if name == "load" or any(s.name == name for s in self.stages):
            raise ProtocolError(f"{verb} {name!r} again")
        return name

    def missing(self) -> list[str]:
        """The stages every run must report that this one has not: a pass needs them all."""
        done = {s.name for s in self.stages}
        required = ["eager", "compile"] if self.request.compile else ["eager"]
        if "shapes" not in done:  # else the entry has no inputs_for: one error for all shapes
            required += ["shape " + "x".join(map(str, s)) for s in self.request.shapes]
        loaded = [] if self.evaluation.model is not None else ["load"]
        return loaded + [name for name in required if name not in done]

    def _record(self, result: StageResult) -> None:
        self.stages.append(result)
        self.current = None
        self.report(Progress("stage", name=result.name, result=result))

    def on_timeout(self) -> None:
        seconds = f"{self.request.timeout:g} s"
        if self.current in (None, "load"):
            self.evaluation.problem = Problem(
                "entry-timeout",
                f"Loading {self.request.entry.text} and running it once on the CPU did not finish "
                f"within {seconds}; the worker was killed.",
                "Check the entry for a hang, or raise --timeout for a large model.",
            )
        else:
            message = f"did not finish within {seconds}; the worker was killed"
            self._record(StageResult(self.current, "timeout", message, wall_s=self.elapsed()))

    def on_exit(self, code: int | None, stderr_tail: str) -> None:
        why = why_it_ended(code, stderr_tail)
        if self.current == "load":
            self.evaluation.problem = Problem(
                "worker-crashed",
                f"The {WORKER} exited with code {code} while loading "
                f"{self.request.entry.text}{why}",
                "Run the entry directly in the target interpreter to see why.",
            )
        elif self.current is not None:
            message = f"the worker exited with code {code} during this stage{why}"
            self._record(StageResult(self.current, "error", message, wall_s=self.elapsed()))
        elif self.evaluation.problem is None and self.missing():  # between stages: no pass
            self.evaluation.problem = Problem(
                "worker-crashed",
                f"The {WORKER} exited with code {code} before reporting "
                f"{', '.join(self.missing())}{why}",
                "Run the entry directly in the target interpreter to see why.",
            )
