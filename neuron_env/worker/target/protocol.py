"""The worker's side of the JSON-lines protocol.

Events, one JSON object per line on the worker's original stdout:

* ``{"event": "hello", "info": {...}}`` — torch imported, device checked (``device.describe``);
* ``{"event": "fatal", "kind": ..., "message": ..., "hint": ...}`` — the suite cannot run here;
* ``{"event": "start", "name": variant}`` then ``{"event": "result", "name": variant, ...}``;
* ``{"event": "done"}``.

Everything else that writes to stdout (torch, the device runtime, C++ libraries) is sent to stderr
so that it cannot corrupt the stream.
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable
from typing import Any, TextIO

_channel: TextIO | None = None


def open_channel() -> None:
    """Keep the real stdout for events and point file descriptor 1 at stderr."""
    global _channel
    sys.stdout.flush()
    _channel = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr


def emit(event: str, **fields: Any) -> None:
    line = json.dumps({"event": event, **_finite(fields)})
    out = _channel if _channel is not None else sys.stdout
    out.write(line + "\n")
    out.flush()


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: send them as strings."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class Fatal(Exception):
    """The suite cannot run in this interpreter (no torch, no device, bad request)."""

    def __init__(self, kind: str, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
        self.hint = hint


def start(check_request: Callable[[dict[str, Any]], object]) -> tuple[Any, dict[str, Any]] | None:
    """A job's first steps: import torch, read the JSON request on stdin (``check_request`` looks
    up what the job needs in it), open its device and emit ``hello``. Returns the device and the
    request, or None after a ``fatal`` event (the job then exits 3)."""
    from .errors import require_torch

    try:
        require_torch()
        request = _read_request(check_request)
        from .device import Device

        device = Device(request["device"], request.get("compile_backend"))
    except Fatal as fatal:
        emit("fatal", kind=fatal.kind, message=fatal.message, hint=fatal.hint)
        return None
    emit("hello", info=device.describe())
    return device, request


def _read_request(check_request: Callable[[dict[str, Any]], object]) -> dict[str, Any]:
    try:
        request = json.loads(sys.stdin.read())
        request["device"], check_request(request)
    except (ValueError, KeyError, TypeError) as exc:
        raise Fatal("bad-request", f"unreadable request on stdin: {exc}") from None
    return dict(request)
