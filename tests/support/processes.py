"""The processes of this machine, as the tests that must leave none behind look for them."""

from __future__ import annotations

import os
from pathlib import Path


def processes_with(marker: str) -> list[int]:
    """The ids of the processes whose environment holds ``marker`` (a variable a test set on the
    command it ran, inherited by everything that command started)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            environ = Path(f"/proc/{pid}/environ").read_bytes()
        except OSError:
            continue
        if marker.encode() in environ:
            found.append(int(pid))
    return found
