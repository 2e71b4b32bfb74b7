"""doctor --level 1/2 and preflight --level 1 run the device tests in the target (fake device)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import NEURON_ENV, CliRunner, cli_runner
from tests.support.hosts import build_sysroot, imds_environment, load_scenario

pytestmark = pytest.mark.integration


@pytest.fixture
def trn2_host(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    scenario = load_scenario("healthy-trn2-ubuntu-26.04")
    with imds_environment(scenario) as env:
        yield build_sysroot(scenario, tmp_path), env


@pytest.fixture(scope="module")
def level_1(tmp_path_factory: pytest.TempPathFactory, neuron_python: Path) -> dict[str, Any]:
    """One healthy ``doctor --level 1 --format json`` (a torch run of seconds), read by the tests
    that only look at its document."""
    where = tmp_path_factory.mktemp("level-1")
    scenario = load_scenario("healthy-trn2-ubuntu-26.04")
    with imds_environment(scenario) as aws:
        result = cli_runner(where)("doctor", "--sysroot", str(build_sysroot(scenario, where)),
                                   "--python", str(neuron_python), "--level", "1",
                                   "--format", "json", env=aws, timeout=600)  # fmt: skip
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def doctor(cli: CliRunner, python: Path, trn2_host: tuple[Path, dict[str, str]], *args: str,
           env: dict[str, str] | None = None) -> tuple[int, dict[str, dict[str, str]]]:  # fmt: skip
    sysroot, aws = trn2_host
    result = cli("doctor", "--sysroot", str(sysroot), "--python", str(python), "--format", "json",
                 *args, env={**aws, **(env or {})}, timeout=600)  # fmt: skip
    doc = json.loads(result.stdout)
    return result.returncode, {f["check"]: f for f in doc["findings"]}


def test_level_1_runs_the_smoke_test(level_1: dict[str, Any]) -> None:
    findings = {f["check"]: f for f in level_1["findings"]}
    smoke = findings["device.smoke"]
    assert smoke["status"] == "ok"
    assert smoke["summary"].startswith("smoke test on neuron (")
    assert "device.selftest" not in findings


def test_the_reported_duration_includes_the_device_levels(level_1: dict[str, Any]) -> None:
    facts = level_1["facts"]
    assert facts["duration_s"] >= facts["device"]["smoke"]["wall_s"] > 0


def test_a_wrong_device_fails_the_smoke_check_with_figures(
    cli: CliRunner, neuron_python: Path, trn2_host: tuple[Path, dict[str, str]]
) -> None:
    code, findings = doctor(cli, neuron_python, trn2_host, "--level", "1",
                            env={"FAKE_NEURON_WRONG_OPS": "aten::mm"})  # fmt: skip
    assert code == 1
    smoke = findings["device.smoke"]
    assert smoke["status"] == "fail" and "FAILED" in smoke["summary"]
    assert (
        "smoke/fp32/eager: fail — output:" in smoke["detail"]
        and "max rel 5.0e-02" in smoke["detail"]
    )


def test_no_device_fails_the_smoke_check_and_skips_the_suite(
    cli: CliRunner, neuron_python: Path, trn2_host: tuple[Path, dict[str, str]]
) -> None:
    code, findings = doctor(cli, neuron_python, trn2_host, "--level", "2",
                            env={"FAKE_NEURON_NO_DEVICE": "1"})  # fmt: skip
    assert code == 1
    assert findings["device.smoke"]["status"] == "fail"
    assert findings["device.selftest"]["status"] == "skip"


def test_level_2_runs_the_standard_suite(
    cli: CliRunner, neuron_python: Path, trn2_host: tuple[Path, dict[str, str]]
) -> None:
    _, findings = doctor(cli, neuron_python, trn2_host, "--level", "2")
    suite = findings["device.selftest"]
    assert suite["status"] == "ok", suite
    assert suite["summary"].startswith("self-test (standard) on neuron passed")


def test_device_results_travel_in_snapshots(
    cli: CliRunner, neuron_python: Path, trn2_host: tuple[Path, dict[str, str]], tmp_path: Path
) -> None:
    sysroot, aws = trn2_host
    snapshot = tmp_path / "host.json"
    made = cli("facts", "--sysroot", str(sysroot), "--python", str(neuron_python), "--level", "1",
               "-o", str(snapshot), env=aws, timeout=600)  # fmt: skip
    assert made.returncode == 0, made.stderr
    judged = cli("doctor", "--facts", str(snapshot), "--level", "1", "--format", "json")
    findings = {f["check"]: f for f in json.loads(judged.stdout)["findings"]}
    assert findings["device.smoke"]["status"] == "ok"
    deeper = cli("doctor", "--facts", str(snapshot), "--level", "2")
    assert deeper.returncode == 2 and "holds level-1 facts" in " ".join(deeper.stderr.split())


def test_asking_for_a_device_check_without_its_level_is_bad_input(cli: CliRunner) -> None:
    result = cli("doctor", "--check", "device.smoke")
    assert result.returncode == 2 and "Add --level 1" in result.stderr


def test_preflight_runs_the_smoke_test_by_default(
    cli: CliRunner, neuron_python: Path, trn2_host: tuple[Path, dict[str, str]]
) -> None:
    sysroot, aws = trn2_host
    result = cli("preflight", "--sysroot", str(sysroot), "--python", str(neuron_python),
                 "--format", "json", env={**aws, "FAKE_NEURON_FALLBACK_OPS": "aten::mm"},
                 timeout=600)  # fmt: skip
    doc = json.loads(result.stdout)
    assert doc["level"] == 1
    smoke = next(f for f in doc["findings"] if f["check"] == "device.smoke")
    assert smoke["status"] == "fail" and "fallback" in smoke["summary"]
    assert result.returncode == 1


def test_the_smoke_fix_for_a_target_without_torch_is_the_exact_install(tmp_path: Path) -> None:
    """The worker only knows an example PyTorch; the doctor knows the release and pairing."""
    from tests.support.hosts import run_scenario_doctor

    findings = run_scenario_doctor("no-torch", tmp_path)
    (matrix,) = tmp_path.glob("matrix-*")  # the scenario's --matrix-dir, carried into the fix
    install = (
        f"{NEURON_ENV} --matrix-dir {matrix} install --torch 2.14 --release 2.34.0 "
        f"--venv {tmp_path / 'target'}"
    )
    assert findings["python.torch"]["fix"] == install
    assert findings["device.smoke"]["fix"] == (
        f"Install TorchNeuron with '{install}', or pass --python for the interpreter that has "
        "torch."
    )
