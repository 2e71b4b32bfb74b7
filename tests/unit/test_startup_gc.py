"""The garbage collector during a run: off while a command's code loads (its collections there
find nothing to free), on again for the command's own work, and as it was for whoever called
:func:`neuron_env.cli.main` (issue 37 §2: doctor's start-up)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from neuron_env import cli
from neuron_env.cli import load_command, main


@pytest.fixture(autouse=True)
def collector_restored() -> Iterator[None]:
    """Each test leaves this process's collector as it found it (on or off; what the test froze
    is frozen still: the tests' session may have frozen its own objects, which cannot be told
    apart)."""
    was_enabled = gc.isenabled()
    yield
    if was_enabled:
        gc.enable()
    else:
        gc.disable()


def test_a_command_s_own_work_is_collected_once_its_code_is_loaded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gc.disable()  # as main() leaves it while the command loads
    monkeypatch.setattr(cli, "_collector_held", True)
    frozen = gc.get_freeze_count()
    load_command("matrix")
    assert gc.isenabled()  # a long run (fleet, scan, install) keeps its memory bounded
    assert gc.get_freeze_count() > frozen  # what was loaded is never examined again

    class Cycle:
        pass

    made = Cycle()
    made.me = made  # type: ignore[attr-defined]
    del made
    assert gc.collect() >= 1  # the command's own garbage is still found


def test_a_caller_that_keeps_the_collector_off_keeps_it_off() -> None:
    gc.disable()  # e.g. a program that loads a command itself, not through main()
    frozen = gc.get_freeze_count()
    load_command("matrix")
    assert not gc.isenabled()
    assert gc.get_freeze_count() <= frozen  # nothing frozen (frozen objects may die)


@pytest.mark.parametrize("enabled", [True, False])
def test_main_leaves_the_collector_as_the_caller_had_it(
    enabled: bool, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.argv", ["neuron-env", "--version"])
    if enabled:
        gc.enable()
    else:
        gc.disable()
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code == 0
    assert "neuron-env" in capsys.readouterr().out
    assert gc.isenabled() is enabled
