"""Results of ``neuron-env evaluate``, as plain frozen data.

A run has *stages*: ``eager`` (the model on the device, eagerly), ``compile`` (``torch.compile``
with ``--compile``) and one ``shape AxB`` per input shape of ``--shapes``. Each has a status of
every worker's vocabulary (``worker/results.py``): ``pass``, ``fail`` (numerics out of
tolerance), ``fallback`` (correct, but ops ran on the CPU), ``error`` (it raised, or compilation
failed) or ``timeout``.
"""

from __future__ import annotations

from dataclasses import field

from neuron_env.frozen import frozen
from neuron_env.worker.results import ALWAYS_FAILING, Comparison, DeviceInfo, Problem, Status


@frozen
class TensorInfo:
    """One input tensor of the entry: its name (the forward's parameter), shape and dtype."""

    name: str
    shape: tuple[int, ...]
    dtype: str


@frozen
class ModelInfo:
    """What the entry returned, as seen in the target."""

    name: str
    model_class: str
    source: str  # file:line of the entry function
    parameters: int
    trainable: int
    dtypes: tuple[str, ...]
    inputs: tuple[TensorInfo, ...]
    loss: bool  # a loss_fn was given (else backward uses fixed random output gradients)
    backward: bool
    training: bool
    reference_s: float | None = None  # one CPU step (the reference), unsynchronised
    warnings: tuple[str, ...] = ()


@frozen
class GraphBreak:
    reason: str
    count: int


@frozen
class FailedOp:
    """An op of the graph the compiler rejected that it also rejects on its own."""

    op: str
    error: str


@frozen
class StageResult:
    """One stage as measured. ``graphs``: graphs compiled (for a shape: new ones at that shape)."""

    name: str
    status: Status
    message: str = ""
    comparisons: tuple[Comparison, ...] = ()
    fallback_ops: tuple[str, ...] | None = None  # None: the device cannot tell
    op_counts: dict[str, int] = field(default_factory=dict)  # ATen op -> calls in one step
    first_call_s: float | None = None  # includes compilation
    steady_s: float | None = None  # median of the repeats, device synchronised
    repeats: int | None = None
    graphs: int | None = None
    graph_breaks: tuple[GraphBreak, ...] = ()
    error: str | None = None  # why compilation (or the stage) failed
    failed_ops: tuple[FailedOp, ...] = ()
    isolation_complete: bool = True  # every op of the rejected graph was tried alone
    traceback: str = ""  # shown with --debug
    wall_s: float | None = None

    @property
    def kind(self) -> str:
        """``eager``, ``compile`` or ``shape``."""
        return "shape" if self.name.startswith("shape") else self.name

    def worst(self) -> Comparison | None:
        """The comparison that failed worst, else the one closest to its bound."""
        if not self.comparisons:
            return None
        return max(self.comparisons, key=lambda c: (not c.ok, c.used or 0.0, c.max_rel or 0.0))

    def failing_comparisons(self) -> list[Comparison]:
        return [c for c in self.comparisons if not c.ok]


@frozen
class Evaluation:
    """One evaluation of the user's model: the device, the model, each stage, and why it stopped
    if it did. ``ok`` is the verdict; ``advice`` says what to change."""

    entry: str
    device: str
    python: str
    info: DeviceInfo | None = None
    model: ModelInfo | None = None
    stages: tuple[StageResult, ...] = ()
    problem: Problem | None = None
    traceback: str = ""  # the user's traceback when their entry failed (shown with --debug)
    allow_fallback: bool = False
    compile: bool = False
    wall_s: float = 0.0
    advice: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.problem is None and bool(self.stages) and not self.failing()

    def failing(self) -> list[StageResult]:
        bad = set(ALWAYS_FAILING) | (set() if self.allow_fallback else {"fallback"})
        return [s for s in self.stages if s.status in bad]

    @property
    def status(self) -> str:
        """The run's status: the worst of its stages, or ``error`` when it could not run."""
        if self.problem is not None or not self.stages:
            return "error"
        for status in ("timeout", "error", "fail", "fallback"):
            if any(s.status == status for s in self.stages):
                return status
        return "pass"

    def stage(self, name: str) -> StageResult | None:
        return next((s for s in self.stages if s.name == name), None)

    @property
    def shapes(self) -> list[StageResult]:
        return [s for s in self.stages if s.kind == "shape"]

    @property
    def recompiles(self) -> int:
        """Shapes after the first that compiled a new graph."""
        return sum(1 for s in self.shapes[1:] if s.graphs)

    @property
    def fallback_ops(self) -> list[str]:
        return sorted({op for s in self.stages for op in (s.fallback_ops or ())})

    @property
    def summary(self) -> str:
        """One line: the verdict and why."""
        name = self.model.name if self.model is not None else self.entry
        if self.problem is not None:
            return f"{name} on {self.device}: could not run: {self.problem.message}"
        failing = self.failing()
        if not self.stages:
            return f"{name} on {self.device} FAILED: no stage reported a result"
        if not failing:
            return f"{name} on {self.device} passed: " + _stage_list(self.stages)
        return f"{name} on {self.device} FAILED: " + _stage_list(failing)

    @property
    def details(self) -> list[str]:
        lines = [f"{s.name}: {s.status} — {s.message}" for s in self.failing()]
        if self.problem is not None and self.problem.hint:
            lines.append(self.problem.hint)
        return lines


def _stage_list(stages: tuple[StageResult, ...] | list[StageResult]) -> str:
    return ", ".join(f"{s.name} {s.status}" for s in stages)
