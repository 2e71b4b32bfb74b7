"""Ctrl-C and SIGTERM around steps that must clean up or must not stop halfway.

SIGTERM (a CI job cancelled, ``kill``) is made to unwind like Ctrl-C, so that one
``except KeyboardInterrupt`` cleans up after both; a commit point (a swap, an atomic replace)
holds both back until it is done. Only the main thread can handle signals: elsewhere these
change nothing. The workers' process-group handling is :mod:`neuron_env.worker.interrupts`.

:func:`interrupts_unwind` holds for a whole command (the CLI's entry point): whatever the command
runs, a signal unwinds it, so its ``with`` blocks remove their temporary files and
:mod:`neuron_env.command` kills its children's process groups. Every handler here notes the
signal (:func:`note_signal`), so that the exit code says which one it was (130 or 143).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from types import FrameType
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:  # a type only: concurrent.futures imports logging and threading's pools
    from concurrent.futures import Future

    UnraisableHookArgs = sys.UnraisableHookArgs

T = TypeVar("T")
_Handler = Callable[[int, "FrameType | None"], None]

#: How often a waiting main thread wakes to run a signal's handler. The kernel hands a process's
#: signal to any of its threads; when a worker thread takes it, only a main thread that wakes on
#: its own runs the handler, so an untimed wait would hold Ctrl-C or SIGTERM until it ended.
WAKE_SECONDS = 0.1

_SIGNALS = (signal.SIGINT, signal.SIGTERM)
_noted: list[int] = []  # the signals that interrupted this run, in order


def note_signal(signum: int) -> None:
    """Remember that ``signum`` interrupted the run (for :func:`interrupt_exit_code`)."""
    _noted.append(signum)


def interrupt_exit_code() -> int:
    """128 + the first signal that interrupted the run: 130 for Ctrl-C (also when no handler of
    ours saw it: Python's own raises KeyboardInterrupt), 143 for SIGTERM."""
    return 128 + (_noted[0] if _noted else signal.SIGINT)


def wait_for_event(event: threading.Event, timeout: float | None = None) -> bool:
    """``event.wait(timeout)``, woken every :data:`WAKE_SECONDS` so a signal is acted on at once."""
    deadline = None if timeout is None else _now() + timeout
    while not event.wait(
        WAKE_SECONDS if deadline is None else min(WAKE_SECONDS, deadline - _now())
    ):
        raise_lost_interrupt()
        if deadline is not None and _now() >= deadline:
            return event.is_set()
    return True


def join_thread(thread: threading.Thread) -> None:
    """``thread.join()``, woken every :data:`WAKE_SECONDS` so a signal is acted on at once."""
    while thread.is_alive():
        thread.join(WAKE_SECONDS)


class InBackground(Generic[T]):
    """``work()`` running in a thread of its own while the caller goes on; :meth:`result` waits.

    What ``ThreadPoolExecutor(max_workers=1).submit(work)`` or a ``Future`` set by a thread gives,
    without importing ``concurrent.futures`` (which imports ``logging``: ~6 ms of a doctor run).
    As a context manager it starts the thread, and leaving the block waits for it, as leaving a
    pool's block does; :meth:`start` starts it without that wait (a daemon thread that may hang).
    """

    def __init__(self, work: Callable[[], T], *, name: str = "InBackground", daemon: bool = False):
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(work,), name=name, daemon=daemon)

    def _run(self, work: Callable[[], T]) -> None:
        try:
            self._value = work()
        except BaseException as exc:  # handed to the caller by result(), as a Future hands it
            self._error = exc
        finally:
            self._done.set()

    def start(self) -> InBackground[T]:
        """Start the work; returns ``self``."""
        self._thread.start()
        return self

    def __enter__(self) -> InBackground[T]:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self._thread.join()

    def result(self, timeout: float | None = None) -> T:
        """The work's result, or its exception raised here; :class:`TimeoutError` when it has not
        ended within ``timeout`` seconds. Woken every :data:`WAKE_SECONDS` so that a signal is
        acted on at once."""
        if not wait_for_event(self._done, timeout):
            raise TimeoutError
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]  # set: the work returned


def future_result(future: Future[T]) -> T:
    """``future.result()``, woken every :data:`WAKE_SECONDS` so a signal is acted on at once."""
    done = threading.Event()
    future.add_done_callback(lambda _: done.set())
    wait_for_event(done)
    return future.result()


def _now() -> float:
    import time

    return time.monotonic()


#: Process groups other threads are waiting for (doctor's probes): only the main thread sees an
#: interrupt, and it would otherwise wait at the end of the run (joining those threads) until
#: each of those commands ended or timed out (15 s for a hung target interpreter).
_groups_off_main: set[int] = set()
_unwinding = threading.Event()  # an interrupt is unwinding the run (set by _interrupt)
#: Interrupts whose KeyboardInterrupt was raised where Python cannot raise (a weakref callback, a
#: ``__del__``, e.g. importlib's module-lock callback while the main thread imports): Python
#: prints "Exception ignored" there and goes on, and the run went on as if no signal came.
_lost = threading.Event()
_lost_raised = threading.Event()  # ... and raised again where Python can (once)


@contextlib.contextmanager
def killed_on_interrupt(group: int) -> Iterator[None]:
    """While the block runs, an interrupt kills process ``group`` at once (SIGKILL), when the
    block runs off the main thread; on the main thread the waiting code kills it itself. A
    group started after the interrupt (its thread went on) is killed on entry."""
    if threading.current_thread() is threading.main_thread():
        yield
        return
    _groups_off_main.add(group)
    try:
        if _unwinding.is_set():
            _kill_group(group)
        yield
    finally:
        _groups_off_main.discard(group)


def _kill_group(group: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    note_signal(signum)
    _unwinding.set()
    for group in list(_groups_off_main):
        _kill_group(group)
    raise KeyboardInterrupt


@contextlib.contextmanager
def _handled_by(signals: tuple[int, ...], handler: _Handler) -> Iterator[None]:
    """``handler`` takes ``signals`` while the block runs; their previous handlers come back after.
    Off the main thread (where signals cannot be handled) the block runs unchanged."""
    try:
        previous = {sig: signal.signal(sig, handler) for sig in signals}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


@contextlib.contextmanager
def interrupts_unwind() -> Iterator[None]:
    """For a whole run: SIGINT and SIGTERM raise :class:`KeyboardInterrupt` (and are noted). One
    raised where Python cannot raise it is recorded instead of printed (:func:`interrupt_lost`)."""
    _noted.clear()
    _unwinding.clear()
    _lost.clear()
    _lost_raised.clear()
    previous = sys.unraisablehook

    def unraisable(args: UnraisableHookArgs) -> None:
        if args.exc_type is KeyboardInterrupt and _unwinding.is_set():
            _lost.set()  # ours: the caller acts on it (interrupt_lost)
        else:
            previous(args)

    sys.unraisablehook = unraisable
    try:
        with _handled_by(_SIGNALS, _interrupt):
            yield
    finally:
        sys.unraisablehook = previous


def raise_lost_interrupt() -> None:
    """Raise, once, the :class:`KeyboardInterrupt` a swallowed interrupt should have raised.

    Called where a run may stop: before a report is written (:func:`neuron_env.output.emit.emit`:
    a JSON report and then the error envelope would be two documents on stdout) and in every
    wait of :func:`wait_for_event` on the main thread; the run then unwinds as on any interrupt.
    Off the main thread it does nothing: the signal's handler raises on the main thread only."""
    if threading.current_thread() is not threading.main_thread():
        return
    if _lost.is_set() and not _lost_raised.is_set():
        _lost_raised.set()
        raise KeyboardInterrupt


def interrupt_lost() -> bool:
    """Whether an interrupt's :class:`KeyboardInterrupt` was swallowed where Python cannot raise
    it, so the run it should have ended went on (the caller then ends it as interrupted)."""
    return _lost.is_set()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Treat SIGTERM like Ctrl-C (raise :class:`KeyboardInterrupt`) while the block runs."""
    with _handled_by((signal.SIGTERM,), _interrupt):
        yield


@contextlib.contextmanager
def held_interrupts() -> Iterator[list[int]]:
    """Hold back Ctrl-C and SIGTERM during a step that must finish (a swap, a cleanup).

    Yields the list of signals that arrived meanwhile; the caller decides what they mean (after
    a commit point the change has happened: an interrupt then must not be reported as "nothing
    changed").
    """
    received: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        note_signal(signum)
        received.append(signum)

    with _handled_by(_SIGNALS, hold):
        yield received


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Hold back Ctrl-C and SIGTERM during a step that must not stop halfway; a signal that
    arrived meanwhile is raised as :class:`KeyboardInterrupt` when the step ends."""
    with held_interrupts() as received:
        yield
    if received:
        raise KeyboardInterrupt
