"""``install --export``: where the lock goes and what it says, attacked.

Real exports from the local indexes (real pip computing the hashes): a destination that cannot be
written (``/dev/full``, a missing folder) is exit 2 with one message, never a traceback; a newline
in the file name stays inside its comment line; ``--export - --json`` gives both the JSON and the
requirements; a requirements file that starts with a byte order mark is read like any other.

The lock read back (``install -r exported.txt``), with both backends: it installs exactly what it
pins; a file whose sha256 is not the lock's, or a package the lock does not list, is refused before
anything changes (exit 1, naming the package); a line without a hash, or a malformed one, in a file
that has hashes is bad input naming the line (exit 2).
"""

from __future__ import annotations

import json
import shlex
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import Result
from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    PrebuiltEnvs,
    fingerprint,
    flat,
    install_env,
    installed,
    leftovers,
    python_here,
    run_cli,
    write_install_matrix,
)

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


# --- the lock read back: ``install -r exported.txt`` ---------------------------------------------

BACKENDS = ["uv", "pip"]
STACK = ("torchtitan-neuron", "stack-tool")


@pytest.fixture(scope="module")
def lock(world: World, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The lock of the release's pins and a user stack, exported from the local indexes."""
    path = tmp_path_factory.mktemp("lock") / "exported.txt"
    result = world.export(str(path), *STACK)
    assert result.returncode == 0, result.stderr
    return path.read_text()


def pins_of(text: str) -> dict[str, str]:
    """Name → version of every ``NAME==VERSION`` line of a lock."""
    lines = [line.split(" ")[0] for line in text.splitlines() if "==" in line and line[0] != "#"]
    return dict(line.split("==") for line in lines)


def install_locked(world: World, venv: Path, text: str, backend: str, tmp: Path) -> Result:
    requirements = tmp / "exported.txt"
    requirements.write_text(text)
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    args += [*world.indexes.args(), "--backend", backend, "-r", str(requirements), "--yes"]
    return run_cli(world.env, *args, timeout=300)


def tampered(text: str, name: str) -> str:
    """``text`` with the sha256 of ``name``'s line replaced by another valid one."""
    head, _, rest = text.partition(f"\n{name}==")
    version_line, _, tail = rest.partition("--hash=sha256:")
    digest = tail[:64]
    forged = "0" * 64 if digest != "0" * 64 else "1" * 64
    return f"{head}\n{name}=={version_line}--hash=sha256:{forged}{tail[64:]}"


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_exported_lock_installs_exactly_what_it_pins(
    world: World, lock: str, tmp_path: Path, prebuilt_envs: PrebuiltEnvs, backend: str
) -> None:
    venv = tmp_path / "env"
    prebuilt_envs.plain_venv(venv)  # a fresh python -m venv (pip need not be bootstrapped)
    result = install_locked(world, venv, lock, backend, tmp_path)
    assert result.returncode == 0, result.stderr
    found = {k: v for k, v in installed(venv).items() if k not in ("pip", "setuptools")}
    assert found == pins_of(lock)  # every package of the lock at its version, and nothing else
    assert found["torch"] == "2.14.0+cpu"
    assert found["torchtitan-neuron"] == "0.2.2+neuron.1"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_tampered_hash_is_refused_and_the_environment_is_unchanged(
    world: World, lock: str, tmp_path: Path, prebuilt_envs: PrebuiltEnvs, backend: str
) -> None:
    venv = tmp_path / "env"
    prebuilt_envs.plain_venv(venv)  # as python -m venv makes it (pip need not be bootstrapped)
    before = fingerprint(venv)
    result = install_locked(world, venv, tampered(lock, "stack-tool"), backend, tmp_path)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    message = flat(result.stderr)
    assert "stack-tool 1.2: the file stack_tool-1.2-" in message
    assert "not the one the lock pins" in message
    export = f" --export {tmp_path / 'exported.txt'}'."
    assert export in message  # the lock it read, named in the command that exports it again
    assert "in place of FILE" not in message
    assert f"Nothing was changed: {venv} is as it was." in message
    assert fingerprint(venv) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_package_the_lock_does_not_list_is_refused(
    world: World, lock: str, tmp_path: Path, backend: str
) -> None:
    head, _, rest = lock.partition("\nfilelock==")
    without = head + "\n" + rest.partition("\n")[2].partition("\n")[2]  # its two lines gone
    assert "filelock" not in pins_of(without)
    venv = tmp_path / "env"
    result = install_locked(world, venv, without, backend, tmp_path)
    assert result.returncode == 1, result.stderr
    message = flat(result.stderr)
    assert "takes filelock 3.13.1 from the indexes, and the lock does not list filelock" in message
    assert f"Nothing was changed: {venv} was not created." in message
    assert not venv.exists()


def test_a_line_without_a_hash_in_a_lock_is_bad_input_naming_it(
    world: World, lock: str, tmp_path: Path
) -> None:
    lines = lock.splitlines()
    number = lines.index("stack-tool==1.2 \\")
    lines[number : number + 2] = ["stack-tool==1.2"]
    before = world.indexes.requests("neuron")
    result = install_locked(world, tmp_path / "env", "\n".join(lines) + "\n", "uv", tmp_path)
    message = bad_input(result)
    where = f"{tmp_path / 'exported.txt'}:{number + 1}"
    assert f"{where}: 'stack-tool==1.2' has no --hash, but" in message
    assert "every one must be" in message
    assert world.indexes.requests("neuron") == before  # refused before any download
    assert not (tmp_path / "env").exists()


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("stack-tool>=1 --hash=sha256:" + "a" * 64, "has a --hash but no exact version"),
        ("stack-tool==1.2 --hash=md5:" + "a" * 32, "is not a sha256 hash"),
        ("stack-tool==1.2 --hash=sha256:" + "a" * 64 + " --pre", "the option '--pre' after"),
    ],
)
def test_a_malformed_hashed_line_is_bad_input(
    world: World, tmp_path: Path, line: str, says: str
) -> None:
    result = install_locked(world, tmp_path / "env", line + "\n", "uv", tmp_path)
    message = bad_input(result)
    assert f"{tmp_path / 'exported.txt'}:1:" in message
    assert says in message
