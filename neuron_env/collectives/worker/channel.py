"""Events, one JSON object per line on the rank's original stdout, written in one ``write`` each
so that the ranks' lines do not interleave on a shared pipe.

* ``step`` (rank 0 only): one (op, size) with every rank's record;
* ``hang`` (any rank): a step that did not end within the timeout, with the ranks that never
  reached it and those that did not finish it; the rank then ends its process;
* ``fatal``: the run cannot start here (no torch.distributed backend, no rendezvous);
* ``done`` (rank 0): every step reported.

Whatever else writes to stdout (torch, the runtime) is pointed at stderr.
"""

from __future__ import annotations

import json
import math
import os
import sys
from typing import Any

_fd: int | None = None


def open_channel() -> None:
    """Keep the real stdout for events and point file descriptor 1 at stderr."""
    global _fd
    sys.stdout.flush()
    _fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def emit(event: str, **fields: Any) -> None:
    data = (json.dumps({"event": event, **_finite(fields)}) + "\n").encode()
    fd = _fd if _fd is not None else 1
    while data:
        data = data[os.write(fd, data) :]


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value
