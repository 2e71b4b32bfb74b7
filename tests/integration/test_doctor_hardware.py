"""On a host with no Neuron device (a workstation, a CI runner), doctor says the environment is
ready except what needs Trainium hardware, names those checks, and exits 3; a Trainium node
without its devices stays "not ready" (preflight, or an instance the matrix knows)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from neuron_env.checks.registry import CHECKS
from tests.support.cli import CliRunner
from tests.support.hosts import Host, load_scenario, scenario_host
from tests.support.junit import assert_valid_junit

pytestmark = pytest.mark.integration

WAITING = ["platform.instance", "driver.module", "driver.devices", "system.packages"]
VERDICT = (
    "Ready except what needs Trainium hardware: platform.instance, driver.module, "
    "driver.devices, system.packages (this host has no Neuron device); "
)


@pytest.fixture
def workstation(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("workstation-ready", tmp_path, NO_COLOR="1")


@pytest.fixture
def ci_runner_on_ec2(tmp_path: Path) -> Iterator[Host]:
    """The same environment on an EC2 instance that is not a Neuron one (a CI runner)."""
    scenario = replace(load_scenario("workstation-ready"), imds="c5.xlarge")
    yield from scenario_host(scenario, tmp_path, NO_COLOR="1")


def test_a_host_without_a_neuron_device_is_ready_except_what_needs_hardware(
    cli: CliRunner, workstation: Host
) -> None:
    result = cli(*workstation.args("doctor", "--release", "2.33.1"), env=workstation.env)
    assert result.returncode == 3, result.stdout + result.stderr
    last = result.stdout.rstrip().splitlines()[-1]
    assert last.startswith(VERDICT), result.stdout
    # The JSON report's counts, the waiting checks among the failed (one count in both)
    assert re.search(r"; 16 ok, 1 warning, 4 failed, 1 skipped in [0-9.]+ s\.$", last), last
    assert "Not ready" not in result.stdout and "✗ driver.module" in result.stdout  # still shown
    as_json = workstation.args("doctor", "--release", "2.33.1", "--format", "json")
    doc = json.loads(cli(*as_json, env=workstation.env).stdout)
    assert (doc["status"], doc["exit_code"], doc["needs_hardware"]) == ("unknown", 3, WAITING)


def test_an_ec2_instance_that_is_not_a_neuron_one_waits_for_hardware_too(
    cli: CliRunner, ci_runner_on_ec2: Host
) -> None:
    result = cli(*ci_runner_on_ec2.args("doctor", "--release", "2.33.1"), env=ci_runner_on_ec2.env)
    assert result.returncode == 3, result.stdout
    assert "c5.xlarge is not a Trainium instance" in result.stdout
    assert result.stdout.rstrip().splitlines()[-1].startswith(VERDICT)


def test_github_annotates_what_needs_hardware_as_warnings_not_errors(
    cli: CliRunner, workstation: Host, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    args = workstation.args(
        "doctor", "--release", "2.33.1", "--format", "github", "-o", str(summary)
    )
    result = cli(*args, env=workstation.env)
    assert result.returncode == 3
    assert "::error" not in result.stdout
    assert result.stdout.count("(needs Trainium hardware: this host has no Neuron device)") == 4
    assert "4 need Trainium hardware (`platform.instance`, `driver.module`" in summary.read_text()


def test_another_failure_keeps_it_not_ready_and_still_names_the_hardware_checks(
    cli: CliRunner, workstation: Host
) -> None:
    # 2.34.0 pairs PyTorch 2.13, not the installed 2.14: a failure no hardware would fix
    result = cli(*workstation.args("doctor", "--release", "2.34.0"), env=workstation.env)
    assert result.returncode == 1, result.stdout
    summary = " ".join(result.stdout.rstrip().split("\n\n")[-1].split())
    assert summary.startswith("Not ready: "), summary
    assert summary.endswith(
        "; needs Trainium hardware: platform.instance, driver.module, driver.devices, "
        "system.packages (this host has no Neuron device)."
    ), summary


def test_the_text_summary_counts_what_the_json_report_counts(
    cli: CliRunner, workstation: Host
) -> None:
    args = workstation.args("doctor", "--release", "2.34.0")
    text = cli(*args, env=workstation.env).stdout
    counts = json.loads(cli(*args, "--format", "json", env=workstation.env).stdout)["counts"]
    assert counts["fail"] > len(WAITING)  # hardware checks and a real failure
    summary = " ".join(text.rstrip().split("\n\n")[-1].split())
    words = {"ok": "ok", "fail": "failed", "skip": "skipped", "warn": "warning", "error": "error"}
    shown = {s: int(n) for n, w in re.findall(r"(\d+) (ok|failed|skipped|warnings?|errors?)\b",
             summary) for s in words if w.startswith(words[s])}  # fmt: skip
    assert shown == {s: n for s, n in counts.items() if n}, summary


def test_preflight_judges_a_node_so_a_missing_device_is_not_ready(
    cli: CliRunner, workstation: Host
) -> None:
    result = cli(*workstation.args("preflight", "--level", "0", "--release", "2.33.1"),
                 env=workstation.env)  # fmt: skip
    assert result.returncode == 1, result.stdout
    assert "Trainium hardware" not in result.stdout


def test_list_checks_says_which_checks_need_hardware(cli: CliRunner) -> None:
    doc = json.loads(cli("doctor", "--list-checks", "--format", "json").stdout)
    flagged = {row["id"] for row in doc["checks"] if row["needs_hardware"]}
    assert flagged == {c.id for c in CHECKS if c.needs_hardware}
    assert {"driver.module", "driver.devices", "platform.instance", "device.smoke"} <= flagged
    assert not flagged & {"platform.os", "platform.python", "python.torch", "env.variables"}
    text = cli("doctor", "--list-checks", env={"COLUMNS": "200"}).stdout
    rows = {line.split()[0]: line for line in text.splitlines() if line[:1].islower()}
    assert all(("│ yes" in rows[c]) == (c in flagged) for c in rows if c in doc_ids(doc)), text


def doc_ids(doc: dict[str, list[dict[str, str]]]) -> set[str]:
    return {row["id"] for row in doc["checks"]}


def test_junit_reports_the_hardware_checks_as_skipped_not_failed(
    cli: CliRunner, workstation: Host, tmp_path: Path
) -> None:
    report = tmp_path / "doctor.xml"
    args = workstation.args("doctor", "--release", "2.33.1", "--format", "junit", "-o", str(report))
    assert cli(*args, env=workstation.env).returncode == 3  # the exit code says "not judged"
    cases = {c.get("name"): c for c in assert_valid_junit(report).iter("testcase")}
    for check in WAITING:
        (skipped,) = cases[check].findall("skipped")
        assert skipped.get("message", "").startswith("needs Trainium hardware")
        assert cases[check].find("failure") is None
    assert not [name for name, case in cases.items() if case.find("failure") is not None]
