"""A gate that judged nothing must not pass: empty inputs are bad input (exit 2), said plainly.

CI jobs, Slurm nodes and fleets trust exit 0. A collection that produced no snapshot, a check
selection that leaves no check, targets that match no instance and a snapshot that claims device
results it does not hold each used to be "ready".
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from neuron_env.checks.registry import CHECKS
from neuron_env.errors import BadInput
from neuron_env.fleet.collect import CollectOptions, collect
from neuron_env.fleet.ssm import SsmGateway
from tests.support.aws import launch_image
from tests.support.cli import CliRunner, Result

pytestmark = pytest.mark.integration

MINIMAL = {
    "schema": "neuron-env/facts/v1",
    "facts": {"collected_at": "2026-12-01T10:00:00+00:00", "sysroot": "/"},
}


def assert_bad_input(result: Result, says: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert says in " ".join(result.stderr.split())


def assert_no_verdict(result: Result, output_format: str, says: str) -> None:
    """Nothing judged, so no report: empty stdout, or (JSON) the error envelope alone."""
    if output_format != "json":
        assert result.stdout == ""
        return
    doc = json.loads(result.stdout)
    assert (doc["status"], doc["exit_code"]) == ("error", 2)
    assert says in doc["errors"][0]["message"]
    assert "findings" not in doc and "hosts" not in doc


@pytest.mark.parametrize("contents", ["nothing", "other-files", "no-host-not-collected"])
def test_fleet_report_of_a_folder_without_snapshots_is_bad_input(
    cli: CliRunner, tmp_path: Path, contents: str
) -> None:
    if contents == "other-files":
        (tmp_path / "README.txt").write_text("snapshots go here\n")
        (tmp_path / "_partial.json").write_text("{}")
    if contents == "no-host-not-collected":
        (tmp_path / "_not-collected.json").write_text('{"hosts": []}')
    for output_format in ("text", "json"):
        result = cli("fleet", "report", str(tmp_path), "--format", output_format)
        says = "holds no facts snapshots (*.json): there is no host to judge"
        assert_bad_input(result, says)
        assert_no_verdict(result, output_format, says)


@pytest.fixture
def snapshot(tmp_path: Path) -> Path:
    path = tmp_path / "host.json"
    path.write_text(json.dumps(MINIMAL))
    return path


def test_skipping_every_check_is_bad_input(cli: CliRunner, snapshot: Path) -> None:
    skips = [arg for c in CHECKS if c.level == 0 for arg in ("--skip", c.id)]
    result = cli("doctor", "--facts", str(snapshot), *skips, "--format", "json")
    assert_bad_input(result, "no check to run")
    assert_no_verdict(result, "json", "no check to run")


def test_checking_and_skipping_the_same_check_is_bad_input(cli: CliRunner, snapshot: Path) -> None:
    result = cli("doctor", "--facts", str(snapshot), "--check", "driver.module", "--skip",
                 "driver.module")  # fmt: skip
    assert_bad_input(result, "no check to run")


@pytest.mark.parametrize(("level", "device"), [
    (1, {"device": "neuron", "level": 1}),
    (2, {"device": "neuron", "level": 2, "smoke": {"ok": True, "summary": "matmul ok"}}),
])  # fmt: skip
def test_a_snapshot_claiming_device_results_it_lacks_is_bad_input(
    cli: CliRunner, tmp_path: Path, level: int, device: dict[str, Any]
) -> None:
    path = tmp_path / "claims.json"
    doc = json.loads(json.dumps(MINIMAL))
    doc["facts"]["device"] = device
    path.write_text(json.dumps(doc))
    result = cli("doctor", "--facts", str(path), "--level", str(level))
    assert_bad_input(result, f"--level {level} needs the device results")


@pytest.fixture
def ec2_with_one_instance() -> Iterator[SsmGateway]:
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-2")
        image = launch_image(ec2)
        tags = [{"ResourceType": "instance", "Tags": [{"Key": "Cluster", "Value": "train-a"}]}]
        ec2.run_instances(ImageId=image, MinCount=1, MaxCount=1, InstanceType="trn2.48xlarge",
                          TagSpecifications=tags)  # fmt: skip
        yield SsmGateway(ec2, boto3.client("ssm", region_name="us-east-2"))


def test_targets_matching_no_instance_are_bad_input(
    ec2_with_one_instance: SsmGateway, tmp_path: Path
) -> None:
    options = CollectOptions(tags=(("Cluster", ("train-b",)),))
    with pytest.raises(BadInput) as raised:
        collect(ec2_with_one_instance, options, tmp_path / "snapshots", sleep=lambda _: None)
    assert raised.value.exit_code == 2
    assert "No running instance matches tag:Cluster=train-b" in raised.value.message
    assert not (tmp_path / "snapshots" / "_not-collected.json").exists()


def test_a_selection_whose_every_check_was_skipped_is_not_ready(
    cli: CliRunner, tmp_path: Path
) -> None:
    path = tmp_path / "smoke-failed.json"
    doc = json.loads(json.dumps(MINIMAL))
    doc["facts"]["device"] = {"device": "neuron", "level": 2,
                              "smoke": {"ok": False, "summary": "matmul is wrong"}}  # fmt: skip
    path.write_text(json.dumps(doc))
    result = cli("doctor", "--facts", str(path), "--level", "2", "--check", "device.selftest")
    assert result.returncode == 1  # the self-test was skipped because the smoke test failed
    assert "Not ready: nothing was judged, 1 skipped." in result.stdout
