"""``evaluate ENTRY``: the user's own model on the device, against the CPU."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.frozen import frozen

if TYPE_CHECKING:
    from neuron_env.evaluate import Evaluation, ProgressCallback
    from neuron_env.progress import ProgressFactory

    #: Opens the display of the stages' progress (entered only while the worker runs).
    StageProgress = ProgressFactory[ProgressCallback | None]

DEFAULT_TIMEOUT = 600.0
DYNAMIC_SHAPES = "compile-dynamic-shapes"  # the matrix's limitation quoted with recompiles


@frozen(kw_only=True)
class EvaluateRequest:
    """What to evaluate (``entry``: module:function or path/to/file.py:function), where, and how;
    ``shapes`` (e.g. "2x128,4x128") imply ``compile``. ``before_run``, when given, is called once
    the request is checked and before the long run (the CLI checks there that its report file
    can be written)."""

    entry: str
    python: Path | None = None
    device: str = "neuron"
    compile: bool = False
    shapes: Sequence[str] = ()
    timeout: float = DEFAULT_TIMEOUT
    repeats: int = 5
    compile_backend: str | None = None
    allow_fallback: bool = False
    matrix_dirs: Sequence[Path] = ()
    before_run: Callable[[], None] | None = None
    progress: StageProgress | None = None


def evaluate_entry(request: EvaluateRequest) -> Evaluation:
    """Bad input (the entry, the shapes, the device, the interpreter) is said before the worker
    starts; what the model does comes back in the evaluation."""
    from neuron_env.device_gate import device_run_target
    from neuron_env.evaluate import Request, evaluate, parse_entry, parse_shapes

    entry = parse_entry(request.entry)
    shapes = parse_shapes(request.shapes)
    target = device_run_target(request.python, request.device, request.matrix_dirs)
    if request.before_run is not None:
        request.before_run()
    compiling = request.compile or bool(shapes)
    run = Request(
        target,
        entry,
        request.device,
        compiling,
        shapes,
        request.timeout,
        request.repeats,
        request.compile_backend,
    )
    note = _dynamic_shapes_note(request.matrix_dirs) if compiling else None
    shown = request.progress() if request.progress is not None else nullcontext(None)
    with shown as report:
        return evaluate(
            run, allow_fallback=request.allow_fallback, dynamic_shapes=note, progress=report
        )


def _dynamic_shapes_note(matrix_dirs: Sequence[Path]) -> str | None:
    """The latest release's text for the dynamic-shapes limitation, quoted with recompiles."""
    from neuron_env.matrix import load_matrix

    release = load_matrix(list(matrix_dirs)).latest()
    found = next((lim for lim in release.limitations if lim.id == DYNAMIC_SHAPES), None)
    if found is None:
        return None
    note = f" {found.note}" if found.note else ""
    return f"{found.summary}{note} (Neuron {release.version})"
