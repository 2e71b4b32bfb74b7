"""How a worker ended, in words: a signal by its name, else the last line it wrote on stderr."""

from __future__ import annotations

import signal


def signal_name(returncode: int | None) -> str | None:
    """``SIGSEGV`` for a worker killed by that signal (a negative exit code); else None."""
    if returncode is None or returncode >= 0:
        return None
    try:
        return signal.Signals(-returncode).name
    except ValueError:
        return f"signal {-returncode}"


def why_it_ended(returncode: int | None, stderr_tail: str) -> str:
    """`` (killed by SIGABRT)`` for a signal: whatever the worker wrote last is no cause then;
    ``: <its last stderr line>`` for an exit; empty when it wrote nothing."""
    killed = signal_name(returncode)
    if killed is not None:
        return f" (killed by {killed})"
    last = [line for line in stderr_tail.strip().splitlines() if line.strip()][-1:]
    return f": {last[0].strip()}" if last else ""
