"""A printed command is one line at any width: a fix, the next step or an error's hint, wrapped
at the terminal's width, would run half of itself when pasted. Prose may wrap; commands never."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, CliRunner
from tests.support.hosts import (
    build_sysroot,
    build_target,
    imds_environment,
    load_scenario,
    write_matrix,
)

pytestmark = pytest.mark.integration

NARROW = {"COLUMNS": "40", "NO_COLOR": "1"}
LONG = "a-folder-with-a-rather-long-name-" * 3


def _doctor(name: str, where: Path) -> Iterator[tuple[list[str], dict[str, str], Path]]:
    """The doctor's arguments on scenario ``name`` built under ``where``, its environment, and
    the matrix it judges against."""
    scenario = load_scenario(name)
    where.mkdir(parents=True)
    sysroot, python = build_sysroot(scenario, where), build_target(scenario, where)
    matrix = write_matrix(scenario.matrix, where)
    args = ["--matrix-dir", str(matrix), "doctor", "--sysroot", str(sysroot)]
    with imds_environment(scenario) as aws:
        yield [*args, "--python", str(python)], aws, matrix


@pytest.fixture
def fresh_venv(tmp_path: Path) -> Iterator[tuple[list[str], dict[str, str], Path]]:
    """A venv with nothing installed, at a path longer than any terminal is wide."""
    yield from _doctor("no-torch", tmp_path / LONG)


@pytest.fixture
def own_environment(tmp_path: Path) -> Iterator[tuple[list[str], dict[str, str], Path]]:
    yield from _doctor("neuron-env-own-environment", tmp_path / LONG)


def _lines_after(text: str, label: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith(label)]


def test_a_fix_is_one_whole_line_at_40_columns_and_runs_as_printed(
    cli: CliRunner, fresh_venv: tuple[list[str], dict[str, str], Path]
) -> None:
    args, env, matrix = fresh_venv
    narrow = cli(*args, env={**env, **NARROW})
    assert narrow.returncode == 1, narrow.stderr
    doc = json.loads(cli(*args, "--format", "json", env=env).stdout)
    fixes = [f["fix"] for f in doc["findings"] if f["status"] != "ok" and f["fix"]]
    assert fixes and all(len(fix) > 100 for fix in fixes)  # wider than the terminal
    assert _lines_after(narrow.stdout, "fix: ") == [f"fix: {fix}" for fix in fixes]
    pasted = _lines_after(narrow.stdout, "fix: ")[0].removeprefix("fix: ")
    # this host's OS is not in the matrix: --os stands in for an Ubuntu host
    shell_env = {**os.environ, "NEURON_ENV_MATRIX_DIR": str(matrix), "PIP_CONFIG_FILE": os.devnull}
    ran = subprocess.run(["bash", "-c", f"{pasted} --dry-run --os ubuntu-26.04"], env=shell_env,
                         capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert "Dry run: nothing was changed." in ran.stdout


def test_the_next_step_is_one_whole_line_and_the_json_says_it_the_same(
    cli: CliRunner, own_environment: tuple[list[str], dict[str, str], Path]
) -> None:
    args, env, _ = own_environment
    narrow = cli(*args, env={**env, **NARROW}).stdout
    doc = json.loads(cli(*args, "--format", "json", env=env).stdout)
    [step] = doc["next"]
    lines = narrow.splitlines()
    at = next(i for i, line in enumerate(lines) if "Create a TorchNeuron one:" in line)
    assert lines[at + 1].strip() == step["shell"]
    program, *rest = step["argv"]
    while rest[:1] == ["--matrix-dir"]:  # doctor's own --matrix-dir, carried (made absolute)
        assert Path(rest[1]).is_absolute()
        rest = rest[2:]
    assert program == str(NEURON_ENV) and rest[:2] == ["install", "--torch"]
    assert doc["target"]["chosen_by"] == "--python"


def test_an_error_hint_keeps_its_command_on_one_line(cli: CliRunner, tmp_path: Path) -> None:
    venv = tmp_path / LONG / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    result = cli("install", "--torch", "2.14", "--release", "2.33.1", "--venv", str(venv),
                 "--dry-run", env=NARROW)  # fmt: skip
    assert result.returncode == 2, result.stderr
    [hint] = [line for line in result.stderr.splitlines() if "instead: " in line]
    command = hint.split("instead: ", 1)[1]
    assert command.startswith(f"{NEURON_ENV} install --torch 2.14 --release 2.33.1 --venv ")
    assert command.endswith(" --python-version 3.12")
