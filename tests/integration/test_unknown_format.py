"""Every command with a --format refuses an unknown one the same way: exit 2, one ``error:`` line
naming the formats that command has, before it reads, probes or reaches AWS."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import CliRunner

pytestmark = pytest.mark.integration

REPORT = "text, json, junit, github"
FLEET = "text, json, junit, github, html"

CASES = {
    "doctor": (["doctor"], REPORT),
    "preflight": (["preflight", "--level", "0"], REPORT),
    "scan": (["scan", "train.py"], "text, json, sarif"),
    "fleet report": (["fleet", "report", "snapshots"], FLEET),
    "fleet doctor": (
        ["fleet", "doctor", "--instance-ids", "i-0123456789abcdef0", "-o", "snapshots"],
        FLEET,
    ),
    # --resolve-ami would ask AWS (here: no region is configured) before the format was looked at
    "launch-template render": (
        ["launch-template", "render", "--instance-type", "trn2.48xlarge", "--torch", "2.14",
         "--neuron-env-source", "pypi", "--resolve-ami"],
        "json, cloudformation, terraform, user-data",
    ),
    # the requirements file does not exist: the format is said first all the same
    "image render": (
        ["image", "render", "--torch", "2.14", "--neuron-env-source", "pypi", "-r", "missing.txt"],
        "text, json",
    ),
    # the device commands: refused before the target interpreter is even looked for
    "smoke": (["smoke", "--python", "missing/bin/python"], "text, json, junit"),
    "selftest": (["selftest", "--python", "missing/bin/python"], "text, json, junit"),
    "evaluate": (["evaluate", "model.py:make", "--python", "missing/bin/python"],
                 "text, json, html"),
    "collectives": (["collectives", "--backend", "gloo", "--nproc-per-node", "2",
                     "--python", "missing/bin/python"], "text, json, junit, html"),
}  # fmt: skip


@pytest.mark.parametrize("name", list(CASES))
def test_an_unknown_format_is_one_error_line(cli: CliRunner, tmp_path: Path, name: str) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    (tmp_path / "snapshots").mkdir()
    args, formats = CASES[name]
    env = {"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
           "AWS_REGION": "", "AWS_DEFAULT_REGION": "", "AWS_PROFILE": ""}  # fmt: skip
    result = cli(*args, "--format", "xml", env=env)
    assert result.returncode == 2, result.stderr
    assert result.stderr == f"error: --format 'xml' is not one of: {formats}.\n"
    assert result.stdout == ""
