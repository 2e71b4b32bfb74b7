"""Ctrl-C and SIGTERM around steps that must clean up or must not stop halfway.

SIGTERM (a CI job cancelled, ``kill``) is made to unwind like Ctrl-C, so that one
``except KeyboardInterrupt`` cleans up after both; a commit point (a swap, an atomic replace)
holds both back until it is done. Only the main thread can handle signals: elsewhere these
change nothing. The workers' process-group handling is :mod:`neuron_env.worker.interrupts`.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C (raise :class:`KeyboardInterrupt`) while the block runs."""

    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise KeyboardInterrupt

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def held_interrupts() -> Iterator[list[int]]:
    """Hold back Ctrl-C and SIGTERM during a step that must finish (a swap, a cleanup).

    Yields the list of signals that arrived meanwhile; the caller decides what they mean (after
    a commit point the change has happened: an interrupt then must not be reported as "nothing
    changed").
    """
    received: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        received.append(signum)

    try:
        previous = {sig: signal.signal(sig, hold) for sig in _SIGNALS}
    except ValueError:  # not the main thread
        yield received
        return
    try:
        yield received
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back Ctrl-C and SIGTERM during a step that must not stop halfway; a signal that
    arrived meanwhile is raised as :class:`KeyboardInterrupt` when the step ends."""
    with held_interrupts() as received:
        yield
    if received:
        raise KeyboardInterrupt
