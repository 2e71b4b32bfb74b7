"""A venv whose base Python is gone: named as such, never judged as another environment.

A venv's ``bin/python`` is a link to the interpreter it was made from. An OS release upgrade
(Ubuntu 24.04 -> 26.04 takes python3.12 away), ``pyenv uninstall`` or ``uv python uninstall``
leaves it a link to nothing. doctor said the interpreter "does not exist"; with the venv
activated (``$VIRTUAL_ENV``) it judged neuron-env's own environment instead, saying no
``$VIRTUAL_ENV`` had named another; install called the venv "not a virtual environment".
Each case builds the real thing: a venv made through a link to this Python, then the link removed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import CliRunner

pytestmark = pytest.mark.integration


@pytest.fixture
def orphan(tmp_path: Path) -> tuple[Path, Path]:
    """A venv made from ``base/bin/python3`` (a link to this Python), then ``base`` removed:
    returns the venv and where its bin/python leads."""
    base = tmp_path / "base" / "bin"
    base.mkdir(parents=True)
    (base / "python3").symlink_to(os.path.realpath(sys.executable))
    venv = tmp_path / "venv"
    subprocess.run([str(base / "python3"), "-m", "venv", "--without-pip", str(venv)], check=True)
    assert subprocess.run([str(venv / "bin" / "python"), "-c", "pass"]).returncode == 0
    shutil.rmtree(tmp_path / "base")
    gone = os.path.realpath(venv / "bin" / "python")
    assert not os.path.exists(gone)
    return venv, Path(gone)


def said(result: object) -> str:
    return " ".join(getattr(result, "stderr", "").split())


def test_doctor_names_the_python_that_is_gone(cli: CliRunner, orphan: tuple[Path, Path]) -> None:
    venv, gone = orphan
    result = cli("doctor", "--python", str(venv / "bin" / "python"))
    assert result.returncode == 2
    assert f"{venv}/bin/python is a link to {gone}, which no longer exists" in said(result)
    assert f"rm -rf {venv} && " in result.stderr
    assert f"install --torch 2.14 --venv {venv}" in result.stderr


def test_an_activated_venv_whose_python_is_gone_is_never_swapped_for_another(
    cli: CliRunner, orphan: tuple[Path, Path]
) -> None:
    venv, gone = orphan
    result = cli("doctor", "--format", "json", env={"VIRTUAL_ENV": str(venv)})
    assert result.returncode == 2
    assert "own environment" not in result.stdout + result.stderr
    assert f"$VIRTUAL_ENV: {venv}/bin/python is a link to {gone}" in said(result)
    doc = json.loads(result.stdout)
    assert doc["exit_code"] == 2 and doc["status"] == "error"
    assert "which no longer exists" in doc["errors"][0]["message"]


def test_an_activated_venv_removed_since_is_named(cli: CliRunner, tmp_path: Path) -> None:
    removed = tmp_path / "removed-venv"
    result = cli("doctor", env={"VIRTUAL_ENV": str(removed)})
    assert result.returncode == 2
    assert f"$VIRTUAL_ENV names {removed}, which does not exist" in said(result)
    assert "deactivate" in result.stderr


def test_the_device_commands_name_it_too(cli: CliRunner, orphan: tuple[Path, Path]) -> None:
    venv, gone = orphan
    for command in ("smoke", "selftest", "facts"):
        result = cli(command, "--python", str(venv / "bin" / "python"))
        assert result.returncode == 2, result.stderr
        assert f"is a link to {gone}, which no longer exists" in said(result)


def test_install_says_the_venv_s_python_is_gone_and_keeps_it(
    cli: CliRunner, orphan: tuple[Path, Path]
) -> None:
    venv, gone = orphan
    before = sorted(p.name for p in venv.rglob("*"))
    result = cli("install", "--torch", "2.14", "--venv", str(venv), "--dry-run")
    assert result.returncode == 2
    assert f"{venv} is a virtual environment whose Python is gone" in said(result)
    assert f"link to {gone}, which no longer exists" in said(result)
    assert f"rm -rf {venv}" in result.stderr
    assert sorted(p.name for p in venv.rglob("*")) == before


def test_a_dangling_interpreter_outside_a_venv_is_never_told_to_be_removed(
    cli: CliRunner, tmp_path: Path
) -> None:
    """/usr/bin/python3 left pointing at a removed python3.12: the folder above it is /usr."""
    link = tmp_path / "usr" / "bin" / "python3"
    link.parent.mkdir(parents=True)
    link.symlink_to(tmp_path / "usr" / "bin" / "python3.12")
    result = cli("doctor", "--python", str(link))
    assert result.returncode == 2
    assert "which no longer exists" in said(result)
    assert "rm -rf" not in result.stderr
    assert "Name an interpreter that exists with --python PATH" in said(result)
