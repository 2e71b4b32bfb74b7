"""The canonical matrix-file writer: writing a shipped release gives back the shipped file."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from neuron_env.matrix import load_release_file
from neuron_env.matrix.write import release_to_toml
from neuron_env.resources import shipped_matrix_dir

SHIPPED = sorted(shipped_matrix_dir().glob("*.toml"))


def _header(text: str) -> list[str]:
    lines = []
    for line in text.splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[2:])
    return lines


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_writing_a_shipped_release_reproduces_its_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert release_to_toml(load_release_file(path), _header(text)) == text


def test_a_changed_release_is_written_so_that_it_loads_back_equal(tmp_path: Path) -> None:
    release = load_release_file(shipped_matrix_dir() / "2.34.0.toml")
    first = release.pairings[0]
    pairing = dataclasses.replace(first, python=("3.12",), note='a "quoted" note')
    changed = dataclasses.replace(release, pairings=(pairing, *release.pairings[1:]))
    path = tmp_path / "2.34.0.toml"
    path.write_text(release_to_toml(changed), encoding="utf-8")
    assert load_release_file(path) == changed
