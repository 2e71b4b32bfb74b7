"""No verdict without a comparison: a matrix value that is missing never yields ``ok``.

Every release × every check, over real-shaped hosts (the scenario trees under tests/data/hosts/,
judged by the real CLI once to take their facts): with one matrix field removed from the release
and every earlier one (so nothing is left to compare with), the checks that read that field are
never ``ok`` and the run never says Ready.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from neuron_env.checks.context import build_context
from neuron_env.checks.model import NOT_COMPARED, summarize
from neuron_env.checks.registry import CHECKS, run_checks
from neuron_env.facts import HostFacts, read_snapshot
from neuron_env.matrix import Matrix, Release
from neuron_env.matrix.load import load_matrix
from tests.support.cli import cli_runner
from tests.support.hosts import load_scenario, run_doctor, write_matrix

pytestmark = pytest.mark.integration

Strip = Callable[[Release], Release]


def _no_system_versions(r: Release) -> Release:
    bare = {
        name: dataclasses.replace(pkg, version=None, confirmed=False)
        for name, pkg in r.system_packages.items()
    }
    return dataclasses.replace(r, system_packages=bare)


def _no_python_range(r: Release) -> Release:
    return dataclasses.replace(
        r, pairings=tuple(dataclasses.replace(p, python=()) for p in r.pairings)
    )


# Each optional matrix field, how to remove it, and the checks that judge by it.
FIELDS: dict[str, tuple[Strip, frozenset[str]]] = {
    "system-packages versions": (
        _no_system_versions,
        frozenset({"system.packages", "driver.module"}),
    ),
    "packages (neuronx-cc, nki)": (
        lambda r: dataclasses.replace(r, packages={}),
        frozenset({"python.compiler"}),
    ),
    "os": (lambda r: dataclasses.replace(r, os={}), frozenset({"platform.os"})),
    "python range": (_no_python_range, frozenset({"platform.python"})),
    "arch": (
        lambda r: dataclasses.replace(r, release=dataclasses.replace(r.release, arch=())),
        frozenset({"platform.arch"}),
    ),
}
# Real-shaped hosts: a healthy Trn2 on Ubuntu 26.04, and one still on Neuron 2.21-era packages.
HOSTS = ("healthy-trn2-ubuntu-26.04", "neuron-2.21-packages")


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each host's doctor report (which embeds its facts), as a file."""
    found = {}
    for name in HOSTS:
        where = tmp_path_factory.mktemp(name)
        result = run_doctor(load_scenario(name), where, "--format", "json")
        found[name] = where / "report.json"
        found[name].write_text(result.stdout)
    return found


@pytest.fixture(scope="module")
def host_facts(snapshots: dict[str, Path]) -> dict[str, HostFacts]:
    return {name: read_snapshot(path) for name, path in snapshots.items()}


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Matrix:
    # the shipped releases, allowing the Python the tests run on (as the scenarios do)
    return load_matrix([write_matrix("allows-test-python", tmp_path_factory.mktemp("matrix"))])


def _stripped(matrix: Matrix, release: Release, strip: Strip) -> Matrix:
    """``matrix`` with ``strip`` applied to ``release`` and every earlier one."""
    return Matrix(tuple(strip(r) if r.version <= release.version else r for r in matrix.releases))


@pytest.mark.parametrize("field", sorted(FIELDS))
@pytest.mark.parametrize("host", HOSTS)
def test_a_missing_matrix_value_never_yields_ok(
    field: str, host: str, host_facts: dict[str, HostFacts], matrix: Matrix
) -> None:
    strip, readers = FIELDS[field]
    checks = [c for c in CHECKS if c.level == 0]
    for release in matrix.releases:
        bare = _stripped(matrix, release, strip)
        ctx = build_context(bare, host_facts[host], release=str(release.version))
        findings = run_checks(host_facts[host], ctx, checks)
        assert {f.check for f in findings} == {c.id for c in checks}
        for finding in findings:
            if finding.check in readers:
                assert finding.status != "ok", (release.version, field, finding)
        summary = summarize(findings)
        assert summary.status in ("fail", "unknown"), (release.version, field, summary)
        assert summary.exit_code in (1, 3)


def test_with_nothing_to_compare_the_finding_says_so_and_the_run_is_not_ready(
    host_facts: dict[str, HostFacts], matrix: Matrix
) -> None:
    bare = Matrix(tuple(_no_system_versions(r) for r in matrix.releases))
    ctx = build_context(bare, host_facts["healthy-trn2-ubuntu-26.04"], release="2.33.1")
    host = host_facts["healthy-trn2-ubuntu-26.04"]
    level_0 = [c for c in CHECKS if c.level == 0]
    findings = {f.check: f for f in run_checks(host, ctx, level_0)}
    packages = findings["system.packages"]
    assert packages.status == "warn"
    assert packages.summary.startswith(NOT_COMPARED + "Neuron 2.33.1 lists no version of")
    assert "aws-neuronx-dkms" in packages.summary
    driver = findings["driver.module"]
    assert (driver.status, driver.summary) == (
        "warn",
        "Not compared: Neuron 2.33.1 lists no version of aws-neuronx-dkms, and no earlier "
        "release neuron-env knows does (driver 2.31.8.0 loaded)",
    )
    summary = summarize(findings.values())
    assert (summary.status, summary.exit_code) == ("unknown", 3)
    assert summary.uncompared == ("driver.module", "system.packages")


def test_a_2_21_era_host_is_not_ready_against_2_34_naming_each_old_package(
    tmp_path: Path,
) -> None:
    result = run_doctor(load_scenario("neuron-2.21-packages"), tmp_path)
    assert result.returncode == 1
    text = " ".join(result.stdout.split())  # the report wraps at the terminal's width
    assert "Judged against Neuron 2.34.0" in text
    assert "Not ready:" in text
    for package, version in [
        ("aws-neuronx-dkms", "2.19.64.0"),
        ("aws-neuronx-runtime-lib", "2.23.110.0-9b5179492"),
        ("aws-neuronx-collectives", "2.23.133.0-3e70920f2"),
        ("aws-neuronx-tools", "2.20.204.0"),
    ]:
        assert f"{package} {version} (Neuron 2.33.1 shipped" in text
    (tmp_path / "json").mkdir()
    as_json = run_doctor(
        load_scenario("neuron-2.21-packages"), tmp_path / "json", "--format", "json"
    )
    assert json.loads(as_json.stdout)["status"] == "fail"


SYSTEM_VERSION = re.compile(r'(\[system-packages\.[^\]]+\]\nrole = "[^"]+"\n)version = "[^"]+"\n')


def test_the_report_of_a_run_that_compared_nothing_is_not_ready(
    snapshots: dict[str, Path], tmp_path: Path
) -> None:
    # a release older than every other, listing no system package version: nothing to compare
    matrix = write_matrix("allows-test-python", tmp_path)
    text = SYSTEM_VERSION.sub(r"\1confirmed = false\n", (matrix / "2.33.1.toml").read_text())
    text = text.replace('version = "2.33.1"', 'version = "2.0.0"', 1)
    (matrix / "2.0.0.toml").write_text(text.replace("date = 2026-11-11", "date = 2020-01-01"))
    facts = snapshots["healthy-trn2-ubuntu-26.04"]
    args = ["--matrix-dir", str(matrix), "doctor", "--facts", str(facts), "--release", "2.0.0"]
    result = cli_runner(tmp_path)(*args)
    assert result.stderr == "", result.stderr
    verdict = result.stdout.rstrip().splitlines()[-1]
    assert result.returncode == 3, result.stdout + result.stderr
    assert verdict.startswith("Could not judge: ")
    assert verdict.endswith("; not compared (nothing to judge by): driver.module, system.packages.")
    assert "Not compared: Neuron 2.0.0 lists no version of aws-neuronx-dkms" in result.stdout
