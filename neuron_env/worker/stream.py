"""A worker's events, each awaited against a deadline that only real progress moves.

The deadline is the caller's (a case, a stage, the worker's start): lines that are not events,
and events that are not progress, do not move it, so a worker that hangs while printing still
times out. Every read is bounded: a line by :data:`MAX_LINE`, the whole stream by
:data:`MAX_OUTPUT`; a worker past either is broken, not slow.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from neuron_env.command import LineTimeout, LineTooLong, StreamingCommand

log = logging.getLogger(__name__)

MAX_LINE = 1 << 20  # 1 MiB: the largest event the workers send is a few KiB
MAX_OUTPUT = 64 << 20  # everything a worker may print on its event stream


class ProtocolError(Exception):
    """The worker broke the protocol; the message says how, as the end of a sentence."""


class EventStream:
    """Reads ``worker``'s JSON events; :meth:`extend` moves the deadline when a step is done."""

    def __init__(self, worker: StreamingCommand, seconds: float) -> None:
        self.worker = worker
        self.seconds = seconds
        self.deadline = time.monotonic() + seconds
        self.received = 0

    def extend(self) -> None:
        """A step finished: the next one gets the full time again."""
        self.deadline = time.monotonic() + self.seconds

    def next_event(self) -> dict[str, Any] | None:
        """The next event; None once the worker's stdout has closed.

        Raises :class:`~neuron_env.command.LineTimeout` at the deadline and
        :class:`ProtocolError` for a line or a stream past its limit.
        """
        while True:
            remaining = self.deadline - time.monotonic()
            if remaining <= 0:
                raise LineTimeout(f"no progress within {self.seconds:g} s")
            try:
                line = self.worker.next_line(remaining)
            except LineTooLong:
                raise ProtocolError(
                    f"sent a line longer than {MAX_LINE >> 20} MiB without a newline"
                ) from None
            if line is None:
                return None
            self.received += len(line) + 1
            if self.received > MAX_OUTPUT:
                raise ProtocolError(f"sent more than {MAX_OUTPUT >> 20} MiB of output")
            event = parse_event(line)
            if event is not None:
                return event


def parse_event(line: str) -> dict[str, Any] | None:
    """A worker's JSON event; None for anything else on its stdout (logged at debug level)."""
    try:
        event = json.loads(line)
    except (ValueError, RecursionError):  # a line of 1 MiB can nest deeper than the stack
        log.debug("worker: %s", line[:200])
        return None
    return event if isinstance(event, dict) and isinstance(event.get("event"), str) else None
