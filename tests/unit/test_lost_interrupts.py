"""A signal whose KeyboardInterrupt Python cannot raise (it arrived while the main thread ran a
weakref callback, e.g. importlib's module-lock callback during an import) is not lost: the run is
ended as interrupted (CI, fourth session of 7 December: doctor exited 1 after a SIGTERM, with
"Exception ignored in: <function _get_module_lock.<locals>.cb>" on stderr)."""

from __future__ import annotations

import gc
import os
import signal
import sys
import weakref

import pytest

from neuron_env.signals import interrupt_lost, interrupts_unwind


class _Object:
    pass


def _signal_inside_a_weakref_callback(sig: signal.Signals) -> None:
    """Send ``sig`` to this process from a weakref callback: its handler runs there."""
    target = _Object()
    keep = weakref.ref(target, lambda _: os.kill(os.getpid(), sig))
    del target  # the callback runs now, and the handler with it
    gc.collect()
    assert keep() is None


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=lambda s: s.name)
def test_an_interrupt_swallowed_by_a_weakref_callback_is_recorded_not_printed(
    sig: signal.Signals, capsys: pytest.CaptureFixture[str]
) -> None:
    with interrupts_unwind():
        _signal_inside_a_weakref_callback(sig)
        assert interrupt_lost()
    assert "Exception ignored" not in capsys.readouterr().err


def test_a_run_without_a_swallowed_interrupt_has_none_recorded() -> None:
    with interrupts_unwind():
        assert not interrupt_lost()
    with pytest.raises(KeyboardInterrupt), interrupts_unwind():
        os.kill(os.getpid(), signal.SIGTERM)
        signal.pause()  # the handler raises here, where Python can raise
    with interrupts_unwind():  # a new run starts with none
        assert not interrupt_lost()


def test_other_exceptions_python_cannot_raise_go_to_the_hook_that_was_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen: list[type[BaseException] | None] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: seen.append(args.exc_type))

    def fails(_: object) -> None:
        raise ValueError("a callback's own failure")

    with interrupts_unwind():
        target = _Object()
        keep = weakref.ref(target, fails)
        del target
        gc.collect()
        assert keep() is None and not interrupt_lost()
    assert seen == [ValueError]
    hook = sys.unraisablehook
    with interrupts_unwind():
        pass
    assert sys.unraisablehook is hook
