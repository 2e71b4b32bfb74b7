"""``neuron-env install --venv`` at paths that cannot be used: exit 2, one message, nothing made.

Each scenario is a real directory: a symbolic link loop, a parent that cannot be written, an
environment whose ``bin/`` cannot be read. (As root, the command runs without the capabilities
that bypass file permissions, so it sees what any user sees.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import CliRunner
from tests.support.install_helpers import (
    flat,
    install_env,
    leftovers,
    obeying_permissions,
    python_here,
    run_cli,
    write_install_matrix,
)

pytestmark = pytest.mark.integration
NOWHERE = ["--index-url", "http://127.0.0.1:9/simple"]  # never contacted: refused before


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return install_env(tmp_path, write_install_matrix(tmp_path / "matrix"))


@pytest.fixture
def locked_down(tmp_path: Path) -> Iterator[list[Path]]:
    """Directories whose permissions a test removes; restored so that pytest can clean up."""
    paths: list[Path] = []
    yield paths
    for path in paths:
        path.chmod(0o755)


def refused(env: dict[str, str], venv: Path) -> str:
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    result = run_cli(env, *args, *NOWHERE, preexec_fn=obeying_permissions())
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.count("error:") == 1
    return flat(result.stderr)


def test_a_symbolic_link_loop_is_bad_input(env: dict[str, str], tmp_path: Path) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    assert "is a symbolic link loop" in refused(env, loop)


def test_a_parent_that_cannot_be_written_is_bad_input(
    env: dict[str, str], tmp_path: Path, locked_down: list[Path]
) -> None:
    parent = tmp_path / "read-only"
    parent.mkdir()
    parent.chmod(0o555)
    locked_down.append(parent)
    message = refused(env, parent / "env")
    assert f"Cannot write to {parent}" in message
    assert list(parent.iterdir()) == []


def test_an_environment_whose_bin_cannot_be_read_is_bad_input(
    env: dict[str, str], tmp_path: Path, locked_down: list[Path]
) -> None:
    venv = tmp_path / "env"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text(f"home = {Path(sys.executable).parent}\n")
    (venv / "bin" / "python").symlink_to(sys.executable)
    (venv / "bin").chmod(0)
    locked_down.append(venv / "bin")
    assert f"Cannot read {venv}/bin/python: Permission denied." in refused(env, venv)
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "oversized"])
@pytest.mark.parametrize("command", ["install", "image"])
def test_a_requirements_file_that_is_no_file_is_refused_without_blocking(
    cli: CliRunner, tmp_path: Path, kind: str, command: str
) -> None:
    path = tmp_path / "requirements.txt"
    if kind == "fifo":
        os.mkfifo(path)  # reading it would block forever: nobody ever writes to it
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")  # reading it would never end
    else:
        path.write_text("x" * (2 * 1024 * 1024) + "\n")
    args = {
        "install": ["install", "--torch", "2.14", "--venv", str(tmp_path / "env"), "--dry-run"],
        "image": ["image", "render", "--torch", "2.14", "--neuron-env-source", "pypi"],
    }[command]
    result = cli(*args, "-r", str(path), timeout=30)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: Cannot read") and "Traceback" not in result.stderr
    assert not (tmp_path / "env").exists()
