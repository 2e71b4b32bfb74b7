"""``neuron-env fleet report`` over real snapshots from ``neuron-env facts`` on scenario hosts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliRunner, cli_runner
from tests.support.hosts import (
    build_sysroot,
    build_target,
    imds_environment,
    load_scenario,
    write_matrix,
)
from tests.support.html_pages import assert_self_contained, render_in_chromium
from tests.support.junit import assert_valid_junit, totals

pytestmark = pytest.mark.integration

# instance id → scenario host it is made from
FLEET = {
    "i-0aaa000000000001": "healthy-trn2-ubuntu-26.04",
    "i-0aaa000000000002": "healthy-trn2-ubuntu-26.04",
    "i-0bbb000000000003": "driver-not-loaded",
    "i-0bbb000000000004": "driver-not-loaded",
    "i-0ccc000000000005": "placeholders",
    "i-0ddd000000000006": "kernel-headers-missing",
}


def collect_snapshot(cli: CliRunner, scenario_name: str, where: Path, out: Path) -> None:
    scenario = load_scenario(scenario_name)
    where.mkdir()
    sysroot, python = build_sysroot(scenario, where), build_target(scenario, where)
    with imds_environment(scenario) as env:
        result = cli(
            "facts", "--sysroot", str(sysroot), "--python", str(python), "-o", str(out), env=env
        )
    assert result.returncode == 0, result.stderr


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A directory of snapshots (as ``fleet collect`` leaves it) and a matrix dir for 3.11."""
    root = tmp_path_factory.mktemp("fleet")
    cli = cli_runner(root)
    snapshots = root / "snapshots"
    snapshots.mkdir()
    for instance, scenario in FLEET.items():
        collect_snapshot(cli, scenario, root / instance, snapshots / f"{instance}.json")
    (snapshots / "i-0eee000000000007.json").write_text('{"schema": "neuron-env/facts/v1", "fac')
    (snapshots / "_not-collected.json").write_text(json.dumps({"hosts": [
        {"instance": "i-0fff000000000008", "reason": "not managed by Systems Manager"},
        {"instance": "i-0fff000000000009", "reason": "neuron-env is not installed"},
    ]}))  # fmt: skip
    return snapshots, write_matrix("allows-test-python", root)


def run_report(cli: CliRunner, fleet: tuple[Path, Path], *args: str) -> tuple[int, dict[str, Any]]:
    snapshots, matrix = fleet
    result = cli(
        "--matrix-dir", str(matrix), "fleet", "report", str(snapshots), "--format", "json", *args
    )
    return result.returncode, json.loads(result.stdout)


def test_hosts_are_grouped_by_failing_check_with_the_fix(
    cli: CliRunner, fleet: tuple[Path, Path]
) -> None:
    code, doc = run_report(cli, fleet)
    assert code == 1
    # every host runs 2.33-era torch-neuronx, whose known issues Neuron 2.34.0 fixes: the ready
    # ones are ready with that warning, grouped with the upgrade
    assert doc["counts"] == {"fail": 3, "warn": 3}
    groups = {g["check"]: g for g in doc["groups"]}
    known = groups["python.known-issues"]
    assert known["status"] == "warn" and "--release 2.34.0" in known["fix"]
    assert len(known["hosts"]) >= 3
    assert groups["driver.module"]["hosts"] == ["i-0bbb000000000003", "i-0bbb000000000004"]
    assert groups["driver.module"]["fix"] == "sudo modprobe neuron"
    assert groups["python.placeholders"]["hosts"] == ["i-0ccc000000000005"]
    assert groups["system.packages"]["status"] == "warn"
    assert doc["releases"] == {"2.33.1": 6}


def test_unreadable_and_uncollected_hosts_are_reported_not_lost(
    cli: CliRunner, fleet: tuple[Path, Path]
) -> None:
    _, doc = run_report(cli, fleet)
    missing = {m["name"]: m["reason"] for m in doc["missing"]}
    assert "unreadable snapshot" in missing["i-0eee000000000007"]
    assert missing["i-0fff000000000008"] == "not managed by Systems Manager"
    assert len(doc["hosts"]) == 6


def test_readiness_for_a_release(cli: CliRunner, fleet: tuple[Path, Path]) -> None:
    code, doc = run_report(cli, fleet, "--release", "2.34.0")
    assert doc["release"] == "2.34.0"
    groups = {(g["check"], g["status"]): g for g in doc["groups"]}
    # A 2.33 build is not 2.34's 2.14.3.1: asked "ready for 2.34?", those hosts are not.
    behind = groups[("python.torch-neuronx", "fail")]
    assert len(behind["hosts"]) == 6 and "--release 2.34.0" in behind["fix"]
    assert "i-0ccc000000000005" in behind["hosts"]  # the placeholder host
    assert ("python.torch-neuronx", "warn") not in groups
    assert doc["counts"] == {"fail": 6} and code == 1


def test_text_report_leads_with_the_verdict(cli: CliRunner, fleet: tuple[Path, Path]) -> None:
    snapshots, matrix = fleet
    result = cli("--matrix-dir", str(matrix), "fleet", "report", str(snapshots))
    lines = result.stdout.splitlines()
    assert lines[0].startswith("neuron-env fleet report · 9 hosts")
    assert (
        lines[1]
        == "Fleet not ready: 3 ready (0 ok, 3 with warnings), 3 not ready, 3 without a verdict."
    )
    assert "  ✗ driver.module — 2 hosts: i-0bbb000000000003, i-0bbb000000000004" in lines
    assert "      fix: sudo modprobe neuron" in lines


def test_the_html_page_has_a_section_per_failing_check_naming_its_hosts(
    cli: CliRunner, fleet: tuple[Path, Path], tmp_path: Path
) -> None:
    snapshots, matrix = fleet
    page_file = tmp_path / "fleet.html"
    args = ("--matrix-dir", str(matrix), "fleet", "report", str(snapshots))
    result = cli(*args, "--format", "html", "-o", str(page_file))
    assert result.returncode == 1, result.stderr
    page = assert_self_contained(page_file.read_text(encoding="utf-8"))
    _, doc = run_report(cli, fleet)
    failing = [g for g in doc["groups"] if g["status"] == "fail"]
    sections = [s for s in page.sections if s.css == "group fail"]
    assert [s.heading for s in sections] == [f"Not ready: {g['check']}" for g in failing]
    assert [s.items for s in sections] == [g["hosts"] for g in failing]
    assert page.section("Not ready: driver.module").items == [
        "i-0bbb000000000003", "i-0bbb000000000004"
    ]  # fmt: skip
    assert [s.heading for s in page.sections if s.css == "group warn"] == [
        "Warning: python.known-issues",
        "Warning: system.packages",
    ]
    shown = page.shown()
    assert "sudo modprobe neuron" in shown
    assert "Fleet not ready: 3 ready (0 ok, 3 with warnings), 3 not ready" in shown
    assert (
        "i-0fff000000000008: not managed by Systems Manager"
        in page.section("No verdict (3 hosts)").items
    )
    rendered = render_in_chromium(page_file, tmp_path)
    assert [s.heading for s in rendered.sections if s.css == "group fail"] == [
        s.heading for s in sections
    ]


def test_junit_has_one_testcase_per_host_and_validates(
    cli: CliRunner, fleet: tuple[Path, Path], tmp_path: Path
) -> None:
    snapshots, matrix = fleet
    out = tmp_path / "fleet.xml"
    cli(
        "--matrix-dir",
        str(matrix),
        "fleet",
        "report",
        str(snapshots),
        "--format",
        "junit",
        "-o",
        str(out),
    )
    counts = totals(assert_valid_junit(out))
    assert (counts["tests"], counts["failures"], counts["errors"]) == (9, 3, 3)


def test_github_format_annotates_each_group(cli: CliRunner, fleet: tuple[Path, Path]) -> None:
    snapshots, matrix = fleet
    result = cli(
        "--matrix-dir", str(matrix), "fleet", "report", str(snapshots), "--format", "github"
    )
    lines = result.stdout.splitlines()
    assert (
        "::error title=neuron-env driver.module::2 hosts: i-0bbb000000000003, i-0bbb000000000004"
        "%0Afix: sudo modprobe neuron"
    ) in lines
    assert (
        "::warning title=neuron-env system.packages::1 host: i-0ddd000000000006"
        "%0Afix: sudo apt-get install -y linux-headers-6.17.0-1004-aws"
    ) in lines
    assert "### neuron-env fleet report: 9 hosts" in lines


def test_a_healthy_fleet_exits_0(cli: CliRunner, fleet: tuple[Path, Path], tmp_path: Path) -> None:
    snapshots, matrix = fleet
    healthy = tmp_path / "healthy"
    healthy.mkdir()
    for name in ("i-0aaa000000000001", "i-0aaa000000000002", "i-0ddd000000000006"):
        shutil.copy(snapshots / f"{name}.json", healthy)
    result = cli("--matrix-dir", str(matrix), "fleet", "report", str(healthy))
    assert result.returncode == 0
    assert result.stdout.splitlines()[1].startswith("Fleet ready: 3 ready")


def test_bad_input(cli: CliRunner, fleet: tuple[Path, Path], tmp_path: Path) -> None:
    assert cli("fleet", "report", str(tmp_path / "nope")).returncode == 2
    snapshots, matrix = fleet
    unknown = cli(
        "--matrix-dir", str(matrix), "fleet", "report", str(snapshots), "--release", "9.9.9"
    )
    assert unknown.returncode == 2 and "Known releases" in unknown.stderr


def test_one_snapshot_file_is_told_the_two_commands_that_judge_it(
    cli: CliRunner, fleet: tuple[Path, Path], tmp_path: Path
) -> None:
    """``neuron-env facts -o host.json`` then ``fleet report host.json``: it said the path "is not
    a directory of facts snapshots" and no more."""
    snapshots, matrix = fleet
    one = tmp_path / "one"
    one.mkdir()
    host = one / "i-0aaa000000000001.json"
    shutil.copy(snapshots / host.name, host)
    result = cli("--matrix-dir", str(matrix), "fleet", "report", str(host))
    assert result.returncode == 2
    said = " ".join(result.stderr.split())
    assert f"error: {host} is a file: fleet report judges a folder of facts snapshots." in said
    assert f"doctor --facts {host}'" in said and f"fleet report {one}'" in said
    judged = cli("--matrix-dir", str(matrix), "doctor", "--facts", str(host))
    assert judged.returncode == 0 and "Ready" in judged.stdout
    assert cli("--matrix-dir", str(matrix), "fleet", "report", str(one)).returncode == 0
