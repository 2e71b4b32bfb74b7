"""Hold a real neuron-env process at a named phase, from the test side.

The tests put this folder on ``PYTHONPATH`` of the one process they want to stop (see
``tests/support/pausing.py``), so Python imports this file at start-up. With
``PAUSE_SHIM_AT=<phase>`` it watches the process's function calls (``sys.setprofile``) and, when
the process reaches that phase, writes ``<phase>.paused`` (holding its pid) into
``$PAUSE_SHIM_DIR`` and waits until ``<phase>.go`` appears there. The product knows nothing about
it: a phase is a call or a return of one of its functions, named below. Signals reach the process
meanwhile as they would at that point: a held Ctrl-C stays held, an unheld one interrupts the wait.
"""

from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any


@dataclass(frozen=True)
class Point:
    """A call (``"call"``) or a return (``"return"``) of ``name`` in a file ending in ``file``."""

    event: str
    file: str
    name: str
    key: str | None = None  # the value of the function's ``key`` argument, where it has one
    caller: tuple[str, str] | None = None  # (file, function) that must be the caller


_INSTALL = "neuron_env/install/"
PHASES: dict[str, tuple[Point, ...]] = {
    # before the staging directory is made (nothing done yet)
    "resolve": (Point("call", _INSTALL + "staging.py", "make_staging_dir"),),
    # the staging venv exists (copied or created), nothing installed into it yet
    "stage": (
        Point("return", _INSTALL + "staging.py", "copy_venv"),
        Point("return", _INSTALL + "backends/", "create_venv"),
    ),
    # the packages are installed, the new environment not yet inspected
    "verify": (Point("return", _INSTALL + "transaction.py", "start", key="verify"),),
    # the new environment swapped in, its interpreter not yet checked (interrupts held)
    "swap": (Point("call", _INSTALL + "transaction.py", "_check_runs"),),
    # the previous environment not yet removed (interrupts held)
    "cleanup": (Point("return", _INSTALL + "transaction.py", "start", key="cleanup"),),
    # parsed.json refresh: before the matrix files are read
    "parse": (Point("call", "neuron_env/matrix/parsed.py", "render"),),
    # parsed.json refresh: the new file written, before it replaces the old one
    "replace": (
        Point("call", "pathlib.py", "replace", caller=("neuron_env/matrix/parsed.py", "write")),
    ),
    # an -o file (image render, launch-template render, ...): the new text written beside it,
    # not yet renamed over it
    "output-rename": (
        Point(
            "call", "pathlib.py", "replace", caller=("neuron_env/output/files.py", "_replace_whole")
        ),
    ),
    # scan --fix: a fixed file written beside the original, not yet renamed over it
    "fix-rename": (
        Point(
            "call", "pathlib.py", "replace", caller=("neuron_env/scan/fix.py", "replace_atomically")
        ),
    ),
    # scan --fix: the first file fixed, the next not yet begun
    "fix-next": (Point("return", "neuron_env/scan/fix.py", "replace_atomically"),),
    # fleet collect: a snapshot written beside its final name, not yet renamed
    "snapshot-rename": (
        Point(
            "call",
            "pathlib.py",
            "replace",
            caller=("neuron_env/output/files.py", "_replace_whole"),  # the one -o writer
        ),
    ),
}


def _matches(point: Point, frame: FrameType, event: str) -> bool:
    code = frame.f_code
    if event != point.event or code.co_name != point.name:
        return False
    if not code.co_filename.endswith(point.file):
        return False
    if point.key is not None and frame.f_locals.get("key") != point.key:
        return False
    if point.caller is None:
        return True
    back = frame.f_back
    caller_file, caller_name = point.caller
    return back is not None and (
        back.f_code.co_name == caller_name and back.f_code.co_filename.endswith(caller_file)
    )


def _hold(phase: str, directory: Path) -> None:
    (directory / f"{phase}.paused").write_text(str(os.getpid()), encoding="utf-8")
    go = directory / f"{phase}.go"
    while not go.exists():
        time.sleep(0.02)


def _install(phase: str, directory: Path) -> None:
    points = PHASES[phase]

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if any(_matches(point, frame, event) for point in points):
            sys.setprofile(None)  # once: the process then runs at full speed
            _hold(phase, directory)

    sys.setprofile(watch)


def _activate() -> None:
    phase = os.environ.pop("PAUSE_SHIM_AT", None)
    directory = os.environ.pop("PAUSE_SHIM_DIR", None)
    # The processes this one starts (pip, uv, the target interpreter) run unwatched.
    here = str(Path(__file__).parent)
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p != here]
    if rest:
        os.environ["PYTHONPATH"] = os.pathsep.join(rest)
    else:
        os.environ.pop("PYTHONPATH", None)
    if phase is not None and directory is not None:
        _install(phase, Path(directory))


_activate()
