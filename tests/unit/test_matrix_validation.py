"""Strict loading: each broken file in tests/data/matrices/bad/ is refused, precisely."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from neuron_env.errors import EXIT_BAD_INPUT, MatrixError
from neuron_env.matrix import load_matrix, load_release_file
from neuron_env.resources import shipped_matrix_dir
from tests.support.cli import DATA

BAD = sorted((DATA / "matrices" / "bad").glob("*/2.99.0.toml"))
NEWER = DATA / "matrices" / "newer"


def expected_message(path: Path) -> str:
    """Each broken file states, in its second comment line, the message it must produce."""
    return path.read_text().splitlines()[1].removeprefix("#").strip()


def test_there_is_one_broken_file_per_failure_mode() -> None:
    modes = {p.parent.name for p in BAD}
    assert {
        "unknown-key",
        "missing-field",
        "invalid-version",
        "invalid-specifier",
        "duplicate-pairing",
        "unknown-schema",
    } <= modes


@pytest.mark.parametrize("path", BAD, ids=lambda p: p.parent.name)
def test_broken_file_is_refused_naming_file_key_and_problem(path: Path) -> None:
    with pytest.raises(MatrixError) as caught:
        load_release_file(path)
    error = caught.value
    assert error.exit_code == EXIT_BAD_INPUT
    assert str(path) in error.message
    assert expected_message(path) in error.message


def test_unknown_key_error_points_at_the_key() -> None:
    with pytest.raises(MatrixError) as caught:
        load_release_file(DATA / "matrices" / "bad" / "unknown-key" / "2.99.0.toml")
    assert caught.value.key == "release.sumary"


def test_a_user_directory_adds_a_newer_release_that_becomes_the_default() -> None:
    matrix = load_matrix([NEWER])
    assert matrix.versions()[-1] == "2.99.0"
    assert matrix.latest().origin == NEWER / "2.99.0.toml"
    assert "2.33.0" in matrix.versions()


def test_environment_variable_adds_matrix_directories(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NEURON_ENV_MATRIX_DIR", str(NEWER))
    assert load_matrix().latest().version.public == "2.99.0"


def test_a_user_file_replaces_the_shipped_file_of_the_same_release(tmp_path: Path) -> None:
    text = (shipped_matrix_dir() / "2.33.0.toml").read_text()
    (tmp_path / "2.33.0.toml").write_text(text.replace('min-glibc = "2.35"', 'min-glibc = "2.36"'))
    assert load_matrix([tmp_path]).get("2.33.0").release.min_glibc == "2.36"


def test_a_broken_user_file_stops_loading_with_its_name(tmp_path: Path) -> None:
    shutil.copy(BAD[0], tmp_path / "2.99.0.toml")
    with pytest.raises(MatrixError, match=re.escape("2.99.0.toml")):
        load_matrix([tmp_path])


def test_a_missing_user_directory_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(MatrixError, match="does not exist"):
        load_matrix([tmp_path / "nope"])
