"""Interrupting ``neuron-env install`` at every phase: the environment is fully old or fully new.

The real process is held at a phase from the test side (``tests/support/pausing.py``: a start-up
shim on that one process's ``PYTHONPATH``, nothing in the product) and gets a real SIGINT, SIGTERM
or SIGKILL there. Before the swap nothing has happened ("Nothing was changed", the environment
byte for byte as it was); from the swap on the install has happened and the message says so;
after a SIGKILL the next install cleans up the leftovers and says so.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    PrebuiltEnvs,
    fingerprint,
    flat,
    install_env,
    installed,
    leftovers,
    run_cli,
    run_in,
    start_install,
    write_install_matrix,
)
from tests.support.pausing import paused_env, wait_until_paused

pytestmark = pytest.mark.integration

BEFORE_SWAP = ("resolve", "stage", "verify")
CASES = [
    *((phase, signal.SIGINT) for phase in ("resolve", "stage", "verify", "swap", "cleanup")),
    ("verify", signal.SIGTERM),
    ("swap", signal.SIGTERM),
    ("stage", signal.SIGKILL),
    ("swap", signal.SIGKILL),
    ("cleanup", signal.SIGKILL),
]


@dataclass(frozen=True)
class World:
    indexes: Indexes
    env: dict[str, str]
    prebuilt: PrebuiltEnvs

    def install(self, venv: Path, torch: str) -> None:
        """``venv`` as ``install --torch TORCH --backend uv`` makes it (installed once, copied)."""
        self.prebuilt.copy(venv, "--backend", "uv", torch=torch)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory, prebuilt_envs: PrebuiltEnvs) -> Iterator[World]:
    """One set of indexes and one uv cache for the module (the installs are then quick)."""
    tmp = tmp_path_factory.mktemp("interrupt")
    running = start_indexes(tmp / "indexes")
    env = install_env(tmp, write_install_matrix(tmp / "matrix"))
    yield World(running, env, prebuilt_envs)
    running.stop()


def paused_upgrade(world: World, venv: Path, phase: str) -> tuple[subprocess.Popen[str], Path]:
    """Start the 2.13 → 2.14 upgrade and wait until it reaches ``phase``."""
    marks = venv.parent / "marks"
    env = paused_env(world.env, phase, marks)
    proc = start_install(env, venv, world.indexes.args(), "--backend", "uv")
    return proc, wait_until_paused(proc, phase, marks)


def assert_new(venv: Path) -> None:
    assert installed(venv)["torch-neuronx"] == "2.14.3.0.1"
    assert run_in(venv, "neuron-hello") == "torch_neuronx 2.14.3.0.1"
    assert run_in(venv, "python", "-c", "import sys; print(sys.prefix)") == str(venv)


@pytest.mark.parametrize(("phase", "sig"), CASES, ids=[f"{p}-{s.name}" for p, s in CASES])
def test_an_interrupt_leaves_the_old_or_the_new_environment_and_says_which(
    world: World, tmp_path: Path, phase: str, sig: signal.Signals
) -> None:
    venv = tmp_path / "env"
    world.install(venv, "2.13")
    before = fingerprint(venv)
    proc, go = paused_upgrade(world, venv, phase)
    proc.send_signal(sig)
    go.touch()  # held signals (swap, cleanup) take effect once the step is done
    _, err = proc.communicate(timeout=120)
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
        if phase in BEFORE_SWAP:
            assert fingerprint(venv) == before
        else:
            assert_new(venv)
        assert leftovers(tmp_path), "a SIGKILL cannot clean up: the next run must"
        args = ["install", "--torch", "2.14", "--venv", str(venv), *world.indexes.args()]
        planned = run_cli(world.env, *args, "--dry-run")
        assert "An install that was killed left" in flat(planned.stdout)
        again = run_cli(world.env, *args, "--backend", "uv")
        assert again.returncode == 0, again.stderr
        assert "left behind by an install that was killed" in flat(again.stderr)
        assert_new(venv)
    elif phase in BEFORE_SWAP:
        assert proc.returncode == 128 + sig, err
        assert f"Interrupted. Nothing was changed: {venv} is as it was." in flat(err)
        assert fingerprint(venv) == before
    else:
        assert proc.returncode == 128 + sig, err
        assert "Nothing was changed" not in err
        assert f"Interrupted after the swap, so the install is complete: {venv} was upgraded" in (
            flat(err)
        )
        assert "The previous environment was removed." in flat(err)
        assert_new(venv)
    assert "Traceback" not in err
    assert leftovers(tmp_path) == []


def test_a_package_installed_by_someone_else_meanwhile_stops_the_swap(
    world: World, tmp_path: Path
) -> None:
    venv = tmp_path / "env"
    world.install(venv, "2.13")
    proc, go = paused_upgrade(world, venv, "verify")
    uv = Path(sys.executable).with_name("uv")
    subprocess.run(
        [str(uv), "pip", "install", "--python", str(venv / "bin" / "python"), "extra-tool",
         "--index-url", world.indexes.urls["default"]],
        env=world.env, check=True, capture_output=True,
    )  # fmt: skip
    changed = fingerprint(venv)
    go.touch()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, err
    assert "extra-tool 1.0 was installed" in flat(err)
    assert f"Nothing was changed: {venv} is as it was." in flat(err)
    assert fingerprint(venv) == changed  # the other install's work is still there
    assert installed(venv)["torch-neuronx"] == "2.13.3.0.1"
    assert leftovers(tmp_path) == []
