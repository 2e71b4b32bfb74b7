"""The newcomer's path, followed literally: every command is the one neuron-env printed, run in
a shell whose PATH holds only the system's directories (as a fresh terminal has)."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from pathlib import Path

from neuron_env.invocation import SYSTEM_PATH
from tests.support.cli import NEURON_ENV
from tests.support.install_helpers import StartIndexes, flat

HARDWARE_VERDICT = re.compile(
    r"^Ready except what needs Trainium hardware: (?P<checks>[\w.\-, ]+) "
    r"\(this host has no Neuron device\); ",
    re.MULTILINE,
)


def _pasted(line: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``line`` as a user pastes it into a fresh shell."""
    shell = {**env, "PATH": SYSTEM_PATH}
    return subprocess.run(
        ["bash", "-c", line], cwd=cwd, env=shell, capture_output=True, text=True, timeout=300
    )


def _line_after(text: str, heading: str) -> str:
    lines = text.splitlines()
    index = next(i for i, line in enumerate(lines) if heading in line)
    return lines[index + 1].strip()


def _failed(report: str) -> set[str]:
    return set(re.findall(r"✗ (\S+)", report))


def _hardware_checks(cwd: Path, env: dict[str, str]) -> set[str]:
    """The checks ``doctor --list-checks`` says need Trainium hardware."""
    listed = _pasted(shlex.join([str(NEURON_ENV), "doctor", "--list-checks", "--format", "json"]),
                     cwd, env)  # fmt: skip
    return {c["id"] for c in json.loads(listed.stdout)["checks"] if c["needs_hardware"]}


def test_a_newcomer_follows_the_printed_commands_to_a_judged_environment(
    tmp_path: Path, isolated_env: dict[str, str], indexes: StartIndexes
) -> None:
    work = tmp_path / "project"
    work.mkdir()
    served = indexes()
    # 1. doctor from neuron-env's own venv, as the quick start leaves it (by its path)
    first = _pasted(shlex.quote(str(NEURON_ENV)) + " doctor", work, isolated_env)
    assert "Target: " in first.stdout
    assert "This is neuron-env's own environment" in first.stdout, first.stdout
    create = _line_after(first.stdout, "Create a TorchNeuron one:")
    assert create.startswith(str(NEURON_ENV)), create  # a fresh shell has no neuron-env on PATH
    assert "-m venv" not in create
    envelope = json.loads(_pasted(f"{first.args[-1]} --format json", work, isolated_env).stdout)
    assert envelope["target"]["chosen_by"] == "neuron-env's own environment"
    assert envelope["next"] == [{"argv": shlex.split(create), "shell": create}]
    # 2. the printed command, with the local indexes the tests stand in for the real ones
    installed = _pasted(f"{create} {shlex.join([*served.args(), '--yes'])}", work, isolated_env)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    assert (work / ".venv-neuron" / "bin" / "python").exists()
    doctor_next = _line_after(installed.stdout, "Next: judge it")
    assert doctor_next.startswith(str(NEURON_ENV)) and " doctor --python " in doctor_next
    assert " smoke --python " in installed.stdout
    # 3. doctor on the new environment: ready but for what needs Trainium hardware, named in
    #    one line (this host has no Neuron device), and exit 3: judged as far as it can be here
    judged = _pasted(doctor_next, work, isolated_env)
    assert "Target: " + str(work / ".venv-neuron" / "bin" / "python") in judged.stdout
    assert "neuron-env's own environment" not in judged.stdout
    named = HARDWARE_VERDICT.search(judged.stdout)
    assert named is not None, judged.stdout
    assert set(named["checks"].split(", ")) == _failed(judged.stdout), judged.stdout
    assert _failed(judged.stdout) <= _hardware_checks(work, isolated_env)
    assert {"driver.module", "driver.devices"} <= _failed(judged.stdout)
    assert judged.returncode == 3, judged.stdout
    as_json = json.loads(_pasted(f"{doctor_next} --format json", work, isolated_env).stdout)
    assert as_json["status"] == "unknown" and as_json["exit_code"] == 3
    assert set(as_json["needs_hardware"]) == _failed(judged.stdout)
    assert as_json["target"]["chosen_by"] == "--python"
    # 4. a plain doctor in that folder judges ./.venv-neuron by default
    plain = _pasted(shlex.quote(str(NEURON_ENV)) + " doctor", work, isolated_env)
    assert "Target: " + str(work / ".venv-neuron" / "bin" / "python") in flat(plain.stdout)
    assert "./.venv-neuron in this folder" in flat(plain.stdout)
