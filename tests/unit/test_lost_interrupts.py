"""A signal whose KeyboardInterrupt Python cannot raise (it arrived while the main thread ran a
weakref callback, e.g. importlib's module-lock callback during an import) is not lost: the run is
ended as interrupted (CI, fourth session of 7 December: doctor exited 1 after a SIGTERM, with
"Exception ignored in: <function _get_module_lock.<locals>.cb>" on stderr)."""

from __future__ import annotations

import gc
import json
import os
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_env.command import run
from neuron_env.signals import interrupt_lost, interrupts_unwind, raise_lost_interrupt


@pytest.fixture(autouse=True)
def no_interrupt_left_behind() -> Iterator[None]:
    """The signals these tests send are real: what the run records of them (an interrupt is
    unwinding it, so a thread's new process group is killed at once) must not outlive the test
    in this pytest worker, where later tests probe the host in threads (test_probes' python probe
    was killed by it in a whole run). An empty run clears the record."""
    yield
    with interrupts_unwind():
        pass


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


def test_a_swallowed_interrupt_is_raised_again_once_where_python_can() -> None:
    with interrupts_unwind():
        _signal_inside_a_weakref_callback(signal.SIGTERM)
        with pytest.raises(KeyboardInterrupt):
            raise_lost_interrupt()
        raise_lost_interrupt()  # once: the unwinding code after it is not interrupted again
        assert interrupt_lost()


def test_off_the_main_thread_a_swallowed_interrupt_is_left_to_the_main_thread() -> None:
    raised: list[BaseException] = []

    def elsewhere() -> None:
        try:
            raise_lost_interrupt()
        except BaseException as exc:  # what the thread would have raised
            raised.append(exc)

    with interrupts_unwind():
        _signal_inside_a_weakref_callback(signal.SIGINT)
        thread = threading.Thread(target=elsewhere)
        thread.start()
        thread.join()
        assert raised == []
        with pytest.raises(KeyboardInterrupt):
            raise_lost_interrupt()


# A run of the real CLI whose SIGTERM arrives inside a weakref callback while it loads the matrix
# command: the callback is set off by an import hook, the way importlib's own module-lock
# callback was when CI saw it.
SWALLOWED_DURING_A_RUN = """
import gc, os, signal, sys, weakref

class Hook:
    fired = False

    def find_spec(self, name, path=None, target=None):
        if name.startswith("neuron_env.matrix") and not Hook.fired:
            Hook.fired = True

            class Doomed:
                pass

            doomed = Doomed()
            keep = weakref.ref(doomed, lambda _: os.kill(os.getpid(), signal.SIGTERM))
            del doomed
            gc.collect()
        return None

sys.meta_path.insert(0, Hook())
sys.argv = ["neuron-env", "matrix", "list", "--format", "json"]
from neuron_env.cli import main

main()
"""


def _run_script(code: str) -> subprocess.CompletedProcess[str]:
    """``code`` in a fresh interpreter (a real CLI run, with the hooks it installs)."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )


def test_a_run_whose_interrupt_was_swallowed_writes_one_document_not_its_report() -> None:
    ran = _run_script(SWALLOWED_DURING_A_RUN)
    assert ran.returncode == 143, ran.stdout + ran.stderr
    document = json.loads(ran.stdout)  # one document: the matrix list was never written
    assert document["status"] == "interrupted"
    assert document["errors"][0]["message"].startswith("Interrupted.")
    assert "Exception ignored" not in ran.stderr
    assert ran.stderr.count("Interrupted") == 1


def test_a_swallowed_interrupt_ends_the_wait_for_a_command_and_kills_it(tmp_path: Path) -> None:
    """pip waiting on a download that never ends: the interrupt Python swallowed is acted on
    within a wake-up, not when the command ends (a fresh-clone run had 'download' hang 60 s)."""
    pid_file = tmp_path / "pid"
    sleeper = (
        f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    )
    started = time.monotonic()
    with interrupts_unwind():
        _signal_inside_a_weakref_callback(signal.SIGINT)
        with pytest.raises(KeyboardInterrupt):
            run([sys.executable, "-c", sleeper], timeout=120)
    assert time.monotonic() - started < 30
    pid = int(pid_file.read_text())
    with pytest.raises(ProcessLookupError):  # killed with its group, and reaped
        os.kill(pid, 0)


# SIGTERM while the typer group is imported, before click handles interrupts: a real signal,
# raised in ordinary code (an import hook), not swallowed.
SIGNALLED_WHILE_LOADING = """
import os, signal, sys

class Hook:
    def find_spec(self, name, path=None, target=None):
        if name == "neuron_env.cli.group":
            os.kill(os.getpid(), signal.SIGTERM)
        return None

sys.meta_path.insert(0, Hook())
sys.argv = ["neuron-env", "matrix", "list", "--format", "json"]
from neuron_env.cli import main

main()
"""


def test_a_signal_while_the_command_loads_ends_as_interrupted_without_a_traceback() -> None:
    ran = _run_script(SIGNALLED_WHILE_LOADING)
    assert ran.returncode == 143, ran.stdout + ran.stderr
    assert "Traceback" not in ran.stderr
    assert ran.stderr.count("Interrupted") == 1
    # Its options were never read, so it does not know it was asked for JSON: nothing on stdout
    # rather than a document (a signal after --format is read gets the envelope, as above).
    assert ran.stdout == ""
