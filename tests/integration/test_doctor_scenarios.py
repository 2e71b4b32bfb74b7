"""Every scenario host under tests/data/hosts/, judged by the real CLI with a real IMDS server.

Each scenario asserts the exact status of every check (unlisted checks must be ``ok``), the text of
the summaries and fixes that matter, and the exit code.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from neuron_env.checks.registry import CHECKS
from tests.support.cli import NEURON_ENV
from tests.support.hosts import (
    load_scenario,
    run_doctor,
    scenario_names,
)

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("name", scenario_names())
def test_scenario_verdicts(name: str, tmp_path: Path) -> None:
    scenario = load_scenario(name)
    result = run_doctor(scenario, tmp_path, "--format", "json")
    assert result.stderr == "", result.stderr
    doc = json.loads(result.stdout)
    findings = {f["check"]: f for f in doc["findings"]}

    expected = {check.id: "ok" for check in CHECKS if check.level == 0} | scenario.expect
    assert {check: f["status"] for check, f in findings.items()} == expected
    for check, text in scenario.says.items():
        assert text in findings[check]["summary"], findings[check]
    # neuron-env is named by the path it ran from, then the --matrix-dir it was given (carried)
    program = re.compile(re.escape(str(NEURON_ENV)) + r"(?: --matrix-dir \S+)*")
    for check, text in scenario.fix.items():
        shown = program.sub("neuron-env", findings[check]["fix"])
        assert text in shown, findings[check]
    for finding in findings.values():
        assert not any(word in finding["fix"] for word in scenario.never), finding
    assert doc["needs_hardware"] == list(scenario.needs_hardware)
    assert result.returncode == expected_exit(expected, scenario.needs_hardware)
    assert doc["exit_code"] == result.returncode
    for finding in findings.values():
        assert_runnable(finding["fix"])


def expected_exit(statuses: dict[str, str], waiting: tuple[str, ...]) -> int:
    """1 when a check failed that hardware would not fix; else 3 when one could not judge or
    waits for Trainium hardware; else 0."""
    judged = {status for check, status in statuses.items() if check not in waiting}
    return 1 if "fail" in judged else 3 if "error" in judged or waiting else 0


def assert_runnable(fix: str) -> None:
    """A fix that is a command (not advice in a sentence) must at least parse as shell."""
    command = fix.removeprefix("on the host: ")
    if command and not command[0].isupper():
        parsed = subprocess.run(["bash", "-n", "-c", command], capture_output=True, check=False)
        assert parsed.returncode == 0, f"{fix!r}: {parsed.stderr.decode()}"


def test_a_scenario_exists_for_every_check_failing_or_warning() -> None:
    touched = {check for name in scenario_names() for check in load_scenario(name).expect}
    host_checks = {c.id for c in CHECKS if c.level == 0}  # device checks: test_doctor_device_levels
    assert touched >= host_checks - {"platform.arch", "env.cache"}
