"""A 2.33-era TorchNeuron environment, made by a real install of Neuron 2.33.1 from local indexes:
doctor names each known bug that Neuron 2.34.0 fixes, with its source, and the upgrade it prints
for the user's own PyTorch family runs as pasted into a fresh shell and clears the warning.

The indexes are the install tests' (tests/data/install/indexes.toml) plus 2.34.0's builds
(faults/neuron-2.34.toml); the matrix is the shipped one, with the Python running the tests and
this host's OS allowed (the shipped files list Python 3.12-3.14 and Ubuntu only).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from neuron_env.probe.os_release import probe_os
from tests.support.cli import NEURON_ENV
from tests.support.hosts import write_matrix
from tests.support.install_helpers import StartIndexes, installed, isolated_environment, python_here
from tests.support.pasted import in_fresh_shell

pytestmark = pytest.mark.integration

SOURCE = "https://github.com/aws-neuron/torch-neuronx/releases/tag/v2.34.0"
BUGS = ("cross-device copies", "SDPA dropout gradients", "compile-cache reuse")


def _matrix(where: Path) -> Path:
    folder = write_matrix("allows-test-python", where)
    key = probe_os(Path("/")).key
    if key and key != "ubuntu-26.04":
        for path in folder.glob("*.toml"):
            host = f'\n[os."{key}"]\nname = "The test host"\nsupport = "supported"\nwheels = true\n'
            text = path.read_text()
            at = text.index("\n[chips.")  # keep the file's table order: [os] comes before chips
            path.write_text(text[:at] + host + text[at:])
    return folder


def _doctor(venv: Path, env: dict[str, str], cwd: Path) -> dict[str, Any]:
    argv = [str(NEURON_ENV), "doctor", "--python", str(venv / "bin" / "python"), "--format", "json"]
    result = in_fresh_shell(shlex.join(argv), cwd, env)
    assert result.returncode in (0, 3), result.stdout + result.stderr
    found = json.loads(result.stdout)
    return {f["check"]: f for f in found["findings"]} | {"_release": found["release"]}


@pytest.mark.parametrize("torch", ["2.13", "2.14"])
def test_a_2_33_environment_is_told_what_2_34_fixes_and_the_upgrade_runs_as_pasted(
    torch: str, tmp_path: Path, indexes: StartIndexes
) -> None:
    served = indexes("neuron-2.34")
    env = isolated_environment(tmp_path, _matrix(tmp_path))
    env.pop("PATH", None)
    env.pop("VIRTUAL_ENV", None)
    venv, cwd = tmp_path / "venv", tmp_path / "work"
    cwd.mkdir()
    made = [str(NEURON_ENV), "install", "--torch", torch, "--release", "2.33.1", "--venv",
            str(venv), "--python", python_here(), *served.args(), "--yes"]  # fmt: skip
    result = in_fresh_shell(shlex.join(made), cwd, env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert installed(venv)["torch-neuronx"].startswith(f"{torch}.3.0.")

    before = _doctor(venv, env, cwd)
    assert before["_release"] == "2.33.1"  # detected from what is installed
    known = before["python.known-issues"]
    assert known["status"] == "warn", known
    assert f"Neuron 2.34.0 fixes (torch-neuronx {torch}.3.1)" in known["summary"]
    assert all(bug in known["summary"] for bug in BUGS) and SOURCE in known["summary"]
    fix = known["fix"]
    assert fix == f"{NEURON_ENV} install --torch {torch} --release 2.34.0 --venv {venv}", fix

    upgraded = in_fresh_shell(f"{fix} {shlex.join([*served.args(), '--yes'])}", cwd, env)
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert installed(venv)["torch-neuronx"].startswith(f"{torch}.3.1.")
    after = _doctor(venv, env, cwd)
    assert after["_release"] == "2.34.0"
    assert after["python.known-issues"]["status"] == "ok", after["python.known-issues"]
