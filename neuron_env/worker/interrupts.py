"""Ctrl-C and SIGTERM while a worker runs: the worker's process group is killed, then exit 130/143.

SIGTERM (a CI job cancelled, ``kill``) is treated like Ctrl-C so that the same unwinding runs: every
worker's process group is killed at once (including workers that run in another thread, like the
doctor's device levels, which the exception cannot reach), no new worker starts, the ``with``
blocks that own worker processes clean up on the way out, and the run ends with
:class:`~neuron_env.errors.Interrupted`. A second signal during that cleanup is ignored, so the
cleanup itself is never cut short.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator
from types import FrameType

from neuron_env.errors import Interrupted
from neuron_env.signals import note_signal
from neuron_env.worker.session import allow_workers, stop_all_workers

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextlib.contextmanager
def stop_on_interrupt(what: str) -> Iterator[None]:
    """Run the block; on SIGINT or SIGTERM end it with :class:`Interrupted` naming ``what``."""
    interrupted: list[int] = []

    def interrupt(signum: int, frame: FrameType | None) -> None:
        if not interrupted:  # the first one stops the run; the rest must not stop the cleanup
            interrupted.append(signum)
            note_signal(signum)
            stop_all_workers()  # also those of other threads, which the exception cannot reach
            raise KeyboardInterrupt

    try:
        previous = {sig: signal.signal(sig, interrupt) for sig in _SIGNALS}
    except ValueError:  # not the main thread: only the main thread receives signals
        yield
        return
    try:
        yield
    except KeyboardInterrupt:
        raise Interrupted(
            f"Interrupted. The {what} was stopped, with everything it had started."
        ) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        allow_workers()
