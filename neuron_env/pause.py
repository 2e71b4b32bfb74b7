"""A test-only hook: stop at a named phase, so that a test can signal the real process.

With ``NEURON_ENV_TEST_PAUSE_AT=<phase>`` the process writes ``<phase>.paused`` (holding its pid)
into ``$NEURON_ENV_TEST_PAUSE_DIR`` (default: the temporary directory) when it reaches that phase,
and waits until ``<phase>.go`` appears there. Without the variable, :func:`pause_at` does nothing.
The phases: the install's ``resolve``, ``stage``, ``verify``, ``swap`` and ``cleanup``; the
``parsed.json`` refresh's ``parse`` (before reading the matrix files) and ``replace`` (its new
file written, before it replaces the old one).
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

PAUSE_AT = "NEURON_ENV_TEST_PAUSE_AT"
PAUSE_DIR = "NEURON_ENV_TEST_PAUSE_DIR"


def pause_at(phase: str) -> None:
    """Wait at ``phase`` when the test hook asks for it (see the module docstring)."""
    if os.environ.get(PAUSE_AT) != phase:
        return
    directory = Path(os.environ.get(PAUSE_DIR) or tempfile.gettempdir())
    (directory / f"{phase}.paused").write_text(str(os.getpid()), encoding="utf-8")
    go = directory / f"{phase}.go"
    while not go.exists():
        time.sleep(0.02)
