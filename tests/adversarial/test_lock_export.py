"""``install --export``: where the lock goes and what it says, attacked.

Real exports from the local indexes (real pip computing the hashes): a destination that cannot be
written (``/dev/full``, a missing folder) is exit 2 with one message, never a traceback; a newline
in the file name stays inside its comment line; ``--export - --json`` gives both the JSON and the
requirements; a requirements file that starts with a byte order mark is read like any other.
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import Result
from tests.integration.indexes import Indexes, start_indexes
from tests.integration.install_helpers import flat, install_env, run_cli, write_install_matrix

pytestmark = pytest.mark.integration


@dataclass(frozen=True)
class World:
    indexes: Indexes
    env: dict[str, str]

    def export(self, file: str, *extra: str) -> Result:
        args = ["install", "--torch", "2.14", "--export", file, *self.indexes.args(), *extra]
        return run_cli(self.env, *args, timeout=120)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("export")
    running = start_indexes(tmp / "indexes")
    yield World(running, install_env(tmp, write_install_matrix(tmp / "matrix")))
    running.stop()


def bad_input(result: Result) -> str:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("error:") == 1
    return flat(result.stderr)


def test_an_export_to_a_full_device_is_bad_input(world: World) -> None:
    message = bad_input(world.export("/dev/full"))
    assert "Cannot write the export to /dev/full: No space left on device." in message


def test_an_export_into_a_missing_folder_is_refused_before_downloading(
    world: World, tmp_path: Path
) -> None:
    target = tmp_path / "nodir" / "x.txt"
    before = world.indexes.requests("neuron")
    message = bad_input(world.export(str(target)))
    assert f"the folder {target.parent} does not exist. Nothing was downloaded." in message
    assert world.indexes.requests("neuron") == before  # refused before any download


def test_a_newline_in_the_file_name_stays_inside_its_comment(world: World, tmp_path: Path) -> None:
    target = tmp_path / "lock\ntorch==0.0.1\n.txt"
    result = world.export(str(target))
    assert result.returncode == 0, result.stderr
    lines = target.read_text().splitlines()
    assert "torch==0.0.1" not in [line.strip() for line in lines]
    (command,) = [line for line in lines if line.startswith("#   pip install")]
    words = subprocess.run(  # the shell reads the quoted name back as the real file name
        ["bash", "-c", f"printf '%s\\0' {command.removeprefix('#   ')}"],
        capture_output=True, text=True, check=True,
    ).stdout.split("\0")  # fmt: skip
    assert str(target) in words
    assert shlex.split(command.removeprefix("#   "))[0] == "pip"


def test_export_to_stdout_with_json_gives_both(world: World) -> None:
    result = world.export("-", "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"].startswith("neuron-env/install-export/")
    assert doc["file"] == "-"
    assert "torch-neuronx==2.14.3.0.1 \\\n    --hash=sha256:" in doc["requirements"]


def test_a_requirements_file_with_a_byte_order_mark_is_read(world: World, tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("\ufefffilelock==3.13.1\n", encoding="utf-8")
    result = world.export("-", "--json", "-r", str(requirements))
    assert result.returncode == 0, result.stderr
    assert "filelock==3.13.1 \\\n" in json.loads(result.stdout)["requirements"]
