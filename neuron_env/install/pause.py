"""A test-only hook: stop the install at a named phase, so that a test can signal the real process.

With ``NEURON_ENV_TEST_PAUSE_AT=<phase>`` (``resolve``, ``stage``, ``verify``, ``swap`` or
``cleanup``) the install writes ``<phase>.paused`` (holding its pid) into
``$NEURON_ENV_TEST_PAUSE_DIR`` (default: the temporary directory) when it reaches that phase, and
waits until ``<phase>.go`` appears there. Without the variable, :func:`pause_at` does nothing.
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

PAUSE_AT = "NEURON_ENV_TEST_PAUSE_AT"
PAUSE_DIR = "NEURON_ENV_TEST_PAUSE_DIR"
PHASES = ("resolve", "stage", "verify", "swap", "cleanup")


def pause_at(phase: str) -> None:
    """Wait at ``phase`` when the test hook asks for it (see the module docstring)."""
    if os.environ.get(PAUSE_AT) != phase:
        return
    directory = Path(os.environ.get(PAUSE_DIR) or tempfile.gettempdir())
    (directory / f"{phase}.paused").write_text(str(os.getpid()), encoding="utf-8")
    go = directory / f"{phase}.go"
    while not go.exists():
        time.sleep(0.02)
