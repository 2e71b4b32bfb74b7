"""How neuron-env names itself in the fixes it prints: found on the system PATH, it is
``neuron-env``; else its absolute path. The lookup is shutil.which's (without importing shutil on
every run): these cases hold the two to the same answers."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from neuron_env.invocation import _which


@pytest.fixture
def path_dirs(tmp_path: Path) -> list[Path]:
    """Four folders: the program as a folder, as a file without the execute bit, executable,
    and executable again (shadowed by the one before)."""
    folders = [tmp_path / name for name in ("as-dir", "not-exec", "exec", "later")]
    for folder in folders:
        folder.mkdir()
    (folders[0] / "neuron-env").mkdir()
    (folders[1] / "neuron-env").write_text("#!/bin/sh\n")
    for folder in folders[2:]:
        program = folder / "neuron-env"
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    return folders


@pytest.mark.parametrize(
    "order",
    [[0, 1, 2, 3], [3, 2], [0, 1], [1, 0, 3], []],
    ids=["first-executable-wins", "shadowed", "none-executable", "skips-dir-and-non-exec", "empty"],
)
def test_the_lookup_answers_as_shutil_which(path_dirs: list[Path], order: list[int]) -> None:
    path = os.pathsep.join(str(path_dirs[i]) for i in order)
    assert _which("neuron-env", path) == shutil.which("neuron-env", path=path)


def test_a_missing_folder_and_an_empty_entry_are_passed_over(
    path_dirs: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # an empty entry is the working directory, where nothing is
    path = os.pathsep.join([str(tmp_path / "missing"), "", str(path_dirs[3])])
    assert _which("neuron-env", path) == shutil.which("neuron-env", path=path)
    assert _which("neuron-env", path) == str(path_dirs[3] / "neuron-env")
