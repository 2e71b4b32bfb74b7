"""Hold a real neuron-env process at a phase (``pause_shim/sitecustomize.py``), then let it go.

The product has no hook for this: the shim is put on ``PYTHONPATH`` of that one process only.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

SHIM = Path(__file__).with_name("pause_shim")


def paused_env(env: dict[str, str], phase: str, marks: Path) -> dict[str, str]:
    """``env`` for a process that stops at ``phase``, writing its marks into ``marks``."""
    marks.mkdir(exist_ok=True)
    path = [str(SHIM), *filter(None, env.get("PYTHONPATH", "").split(os.pathsep))]
    return {
        **env,
        "PYTHONPATH": os.pathsep.join(path),
        "PAUSE_SHIM_AT": phase,
        "PAUSE_SHIM_DIR": str(marks),
    }


def wait_until_paused(
    proc: subprocess.Popen[str], phase: str, marks: Path, timeout: float = 120
) -> Path:
    """Wait until ``proc`` holds at ``phase``; return the file that lets it go on once touched."""
    deadline = time.monotonic() + timeout
    while not (marks / f"{phase}.paused").exists():
        if proc.poll() is not None:
            pytest.fail(f"the process ended before {phase}: {proc.communicate()}")
        assert time.monotonic() < deadline, f"the process never reached {phase}"
        time.sleep(0.02)
    return marks / f"{phase}.go"
