"""Which rank ended a job: torchrun's summary of its first observed failure, read from its stderr.

torchrun (torch 2.13) ends a failed job with a block like this one (run here, a rank killed by
SIGKILL), after it has stopped the other ranks::

    Root Cause (first observed failure):
    [0]:
      time      : 2026-12-07_00:29:03
      host      : localhost
      rank      : 1 (local_rank: 1)
      exitcode  : -9 (pid: 21914)
      error_file: <N/A>
      traceback : Signal 9 (SIGKILL) received by PID 21914

Pure functions over text.
"""

from __future__ import annotations

import re
import signal

from neuron_env.frozen import frozen

ROOT_CAUSE = "Root Cause (first observed failure):"
_FIELD = re.compile(r"^\s*(host|rank|exitcode)\s*:\s*(\S+)", re.MULTILINE)


@frozen
class Crashed:
    """A rank that ended: ``code`` its exit code, negative for the signal that killed it."""

    rank: int
    host: str
    code: int

    def how(self) -> str:
        """``was killed by signal SIGKILL`` or ``exited with code 7``."""
        if self.code < 0:
            try:
                name = signal.Signals(-self.code).name
            except ValueError:
                name = str(-self.code)
            return f"was killed by signal {name}"
        return f"exited with code {self.code}"


def first_failure(stderr: str) -> Crashed | None:
    """The rank torchrun names as its first observed failure, or None when it named none."""
    _, found, block = stderr.rpartition(ROOT_CAUSE)
    if not found:
        return None
    fields = dict(_FIELD.findall(block.split("=====", 1)[0]))
    try:
        return Crashed(int(fields["rank"]), fields.get("host", "?"), int(fields["exitcode"]))
    except (KeyError, ValueError):
        return None
