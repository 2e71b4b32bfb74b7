"""The filesystem steps of the transaction: relocation, the atomic swap, deferred signals."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from neuron_env.errors import OperationFailed
from neuron_env.install.staging import (
    exchange,
    locked,
    make_staging_dir,
    relocate,
    stale_staging_dirs,
)
from neuron_env.signals import deferred_interrupts


def make_venv(root: Path) -> Path:
    (root / "bin").mkdir(parents=True)
    (root / "pyvenv.cfg").write_text(
        f"home = /usr/bin\ncommand = /usr/bin/python3 -m venv {root}\n"
    )
    script = root / "bin" / "tool"
    script.write_text(f"#!{root}/bin/python\nimport tool\n")
    script.chmod(0o755)
    (root / "bin" / "activate").write_text(f"VIRTUAL_ENV='{root}'\nexport VIRTUAL_ENV\n")
    (root / "bin" / "binary").write_bytes(b"\x7fELF\0" + os.fsencode(root))
    (root / "bin" / "python").symlink_to("/usr/bin/python3")
    return root


def test_relocate_rewrites_scripts_activate_and_pyvenv_cfg(tmp_path: Path) -> None:
    staging = make_venv(tmp_path / ".env.neuron-env-staging-x" / "venv")
    target = tmp_path / "env"
    changed = relocate(staging, staging, target)
    assert sorted(p.name for p in changed) == ["activate", "pyvenv.cfg", "tool"]
    assert (staging / "bin" / "tool").read_text().startswith(f"#!{target}/bin/python\n")
    assert os.access(staging / "bin" / "tool", os.X_OK)
    assert f"VIRTUAL_ENV='{target}'" in (staging / "bin" / "activate").read_text()
    assert (staging / "bin" / "binary").read_bytes().endswith(os.fsencode(staging))  # untouched
    assert os.readlink(staging / "bin" / "python") == "/usr/bin/python3"


def test_exchange_swaps_two_directories(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "which").write_text("a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "which").write_text("b")
    exchange(tmp_path / "a", tmp_path / "b")
    assert (tmp_path / "a" / "which").read_text() == "b"
    assert (tmp_path / "b" / "which").read_text() == "a"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]


def test_staging_dirs_sit_beside_the_target_and_are_found_again(tmp_path: Path) -> None:
    target = tmp_path / "env"
    staging = make_staging_dir(target)
    assert staging.parent == tmp_path
    assert stale_staging_dirs(target) == [staging]
    assert stale_staging_dirs(tmp_path / "other") == []


def test_a_second_install_into_the_same_place_is_refused(tmp_path: Path) -> None:
    first, second = locked(tmp_path / "env"), locked(tmp_path / "env")
    with first, pytest.raises(OperationFailed, match="is running"), second:
        pass


def test_ctrl_c_during_a_critical_step_is_raised_after_it(tmp_path: Path) -> None:
    done = []
    with pytest.raises(KeyboardInterrupt), deferred_interrupts():
        os.kill(os.getpid(), signal.SIGINT)
        done.append("finished")
    assert done == ["finished"]
