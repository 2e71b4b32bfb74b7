"""Could not judge is not "not ready": a check whose probe could not run is ``error``, and doctor
and preflight exit 3 (status ``unknown``) when nothing failed, 1 as soon as something did."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV
from tests.support.hosts import build_sysroot, imds_environment, load_scenario, write_matrix

pytestmark = pytest.mark.integration

CRASHING_PYTHON = "#!/bin/sh\necho 'Segmentation fault (core dumped)' >&2\nkill -SEGV $$\n"


def run_with_crashing_python(
    where: Path, command: str, scenario: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``command`` on a scenario host whose target interpreter dies on every start."""
    chosen = load_scenario(scenario)
    sysroot, matrix = build_sysroot(chosen, where), write_matrix(chosen.matrix, where)
    python = where / "bin" / "python3"
    python.parent.mkdir()
    python.write_text(CRASHING_PYTHON)
    python.chmod(0o755)
    args = [str(NEURON_ENV), "--matrix-dir", str(matrix), command, "--sysroot", str(sysroot)]
    args += ["--python", str(python), *extra]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "AWS_", "XLA_"))}
    with imds_environment(chosen) as aws:
        env.update({**aws, "NO_COLOR": "1", "COLUMNS": "200"})
        return subprocess.run(
            args, capture_output=True, text=True, env=env, cwd=where, timeout=120, check=False
        )


def test_a_healthy_host_whose_python_cannot_be_probed_exits_3(tmp_path: Path) -> None:
    result = run_with_crashing_python(tmp_path, "doctor", "healthy-trn2-ubuntu-26.04")
    assert result.returncode == 3, result.stdout + result.stderr
    assert "Could not judge" in result.stdout
    assert "Not ready" not in result.stdout
    assert "Could not probe python" in result.stdout


def test_the_json_envelope_says_unknown_with_exit_code_3(tmp_path: Path) -> None:
    result = run_with_crashing_python(
        tmp_path, "doctor", "healthy-trn2-ubuntu-26.04", "--format", "json"
    )
    doc = json.loads(result.stdout)
    assert (doc["status"], doc["exit_code"], result.returncode) == ("unknown", 3, 3)
    statuses = {f["check"]: f["status"] for f in doc["findings"]}
    assert statuses["python.torch"] == "error" and "fail" not in statuses.values()


def test_a_failure_beside_an_unjudged_check_still_exits_1(tmp_path: Path) -> None:
    result = run_with_crashing_python(tmp_path, "doctor", "driver-not-loaded", "--format", "json")
    doc = json.loads(result.stdout)
    assert (doc["status"], doc["exit_code"], result.returncode) == ("fail", 1, 1)


def test_preflight_follows_doctor(tmp_path: Path) -> None:
    result = run_with_crashing_python(
        tmp_path, "preflight", "healthy-trn2-ubuntu-26.04", "--level", "0", "--format", "json"
    )
    doc = json.loads(result.stdout)
    assert (doc["status"], doc["exit_code"], result.returncode) == ("unknown", 3, 3)
