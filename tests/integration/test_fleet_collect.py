"""``fleet collect`` over SSM Run Command: moto for EC2 and SSM, a gateway subclass for moto's gaps.

moto resolves tags, accepts ``send_command`` (recording MaxConcurrency/MaxErrors) and answers
``get_command_invocation``, but it has no ``describe_instance_information`` and its commands
always succeed with empty output (reference/aws.md §5). ``ScenarioFleet`` fills exactly those gaps:
each instance runs the real shell script neuron-env sent — bash, the real ``neuron-env facts`` on a
scenario host, gzip and base64 — or misbehaves the way its scenario says.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from neuron_env.fleet.collect import CollectOptions, collect
from neuron_env.fleet.ssm import Invocation, SsmGateway, Throttled
from neuron_env.invocation import command
from tests.support.cli import DATA, NEURON_ENV, CliRunner
from tests.support.hosts import (
    build_sysroot,
    build_target,
    load_scenario,
    write_matrix,
)
from tests.support.install_helpers import flat
from tests.support.pasted import in_fresh_shell
from tests.support.validators import assert_shellcheck_clean

pytestmark = pytest.mark.integration

REGION = "us-east-2"
HEALTHY, BROKEN = "healthy-trn2-ubuntu-26.04", "driver-not-loaded"


@dataclass
class Clock:
    """Time that passes only when the collector sleeps."""

    now: float = 0.0
    naps: list[float] = field(default_factory=list)

    def sleep(self, seconds: float) -> None:
        self.naps.append(seconds)
        self.now += seconds

    def __call__(self) -> float:
        return self.now


class ScenarioFleet(SsmGateway):
    """Real EC2/SSM calls against moto, plus what moto cannot do: agents and command output."""

    def __init__(self, ec2: Any, ssm: Any, hosts: dict[str, str], workdir: Path) -> None:
        super().__init__(ec2, ssm)
        self.hosts = hosts  # instance → scenario name or behaviour
        self.workdir = workdir
        self.scripts: dict[str, list[str]] = {}
        self.asked: list[str] = []
        self.batches: list[int] = []
        self.throttle_next = 0

    def managed(self, ids: list[str]) -> set[str]:  # type: ignore[override]
        return {i for i in ids if self.hosts[i] != "unmanaged"}

    def send(self, ids: Any, script: Any, **kwargs: Any) -> str:
        command = super().send(ids, script, **kwargs)
        self.scripts[command] = list(script)
        self.asked += list(ids)
        self.batches.append(len(ids))
        return command

    def invocation(self, command_id: str, instance_id: str) -> Invocation:
        if self.throttle_next:
            self.throttle_next -= 1
            raise Throttled("ThrottlingException")
        assert super().invocation(command_id, instance_id).status == "Success"  # moto knows it
        behaviour = self.hosts[instance_id]
        if behaviour == "hangs":
            return Invocation("InProgress")
        if behaviour == "garbage":
            return Invocation("Success", 0, "this is not base64 gzip")
        return self._run(self.scripts[command_id], behaviour)

    def _run(self, script: list[str], behaviour: str) -> Invocation:
        """The instance runs neuron-env's script; its neuron-env reads the scenario host."""
        bin_dir = self.workdir / f"bin-{behaviour}"
        env = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HOME": str(self.workdir)}
        if behaviour != "no-neuron-env":
            env.update(self._scenario_env(behaviour, bin_dir))
        proc = subprocess.run(["bash", "-c", "\n".join(script)], env=env, capture_output=True,
                              text=True, timeout=120, check=False)  # fmt: skip
        status = "Success" if proc.returncode == 0 else "Failed"
        return Invocation(status, proc.returncode, proc.stdout, proc.stderr)

    def _scenario_env(self, name: str, bin_dir: Path) -> dict[str, str]:
        where = self.workdir / name
        if not where.exists():
            where.mkdir()
            scenario = load_scenario(name)
            sysroot, python = build_sysroot(scenario, where), build_target(scenario, where)
            bin_dir.mkdir()
            wrapper = bin_dir / "neuron-env"  # `neuron-env facts ...` → facts of the scenario host
            wrapper.write_text(f'#!/bin/sh\nexec {NEURON_ENV} "$1" --sysroot {sysroot} '
                               f'--python {python} --probe-timeout 20\n')  # fmt: skip
            wrapper.chmod(0o755)
        return {"AWS_EC2_METADATA_DISABLED": "true"}


@pytest.fixture
def aws(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Any, Any]]:
    # Without moto's thousands of public AMIs, which each test would load and each launch list
    # (seconds of CPU): collect never looks at images; launch() registers the one it needs.
    monkeypatch.setenv("MOTO_EC2_LOAD_DEFAULT_AMIS", "false")
    with mock_aws():
        yield boto3.client("ec2", region_name=REGION), boto3.client("ssm", region_name=REGION)


def launch(ec2: Any, count: int, cluster: str = "train-a") -> list[str]:
    image = ec2.register_image(Name="neuron-dlami", RootDeviceName="/dev/sda1")["ImageId"]
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "Cluster", "Value": cluster}]}]
    response = ec2.run_instances(ImageId=image, MinCount=count, MaxCount=count,
                                 InstanceType="trn2.48xlarge", TagSpecifications=tags)  # fmt: skip
    return sorted(i["InstanceId"] for i in response["Instances"])


def not_collected(folder: Path) -> dict[str, str]:
    doc = json.loads((folder / "_not-collected.json").read_text())
    return {h["instance"]: h["reason"] for h in doc["hosts"]}


OPTIONS = CollectOptions(tags=(("Cluster", ("train-a",)),), timeout=60)


def test_a_mixed_fleet_keeps_every_answer_and_says_why_the_others_are_missing(
    aws: tuple[Any, Any], tmp_path: Path, cli: CliRunner
) -> None:
    ec2, ssm = aws
    ids = launch(ec2, 7)
    launch(ec2, 2, cluster="other")  # not targeted
    behaviours = [HEALTHY, HEALTHY, BROKEN, "unmanaged", "no-neuron-env", "hangs", "garbage"]
    fleet = ScenarioFleet(ec2, ssm, dict(zip(ids, behaviours, strict=True)), tmp_path)
    out, clock = tmp_path / "snapshots", Clock()
    result = collect(fleet, OPTIONS, out, sleep=clock.sleep, clock=clock)

    assert sorted(result.collected) == sorted(ids[:3])
    assert sorted(p.stem for p in out.glob("i-*.json")) == sorted(ids[:3])
    reasons = not_collected(out)
    assert reasons[ids[3]] == "not managed by Systems Manager (no online SSM agent)"
    assert reasons[ids[4]] == "neuron-env is not installed on the instance"
    assert reasons[ids[5]] == "no answer within 120 s"
    assert reasons[ids[6]].startswith("unusable output")
    snapshot = json.loads((out / f"{ids[0]}.json").read_text())
    assert (
        snapshot["schema"] == "neuron-env/facts/v1"
        and snapshot["facts"]["hostname"] == "trn2-node-01"
    )

    matrix = write_matrix("allows-test-python", tmp_path)
    report = cli("--matrix-dir", str(matrix), "fleet", "report", str(out), "--format", "json")
    doc = json.loads(report.stdout)
    assert doc["counts"] == {"warn": 2, "fail": 1}  # 2.33-era torch-neuronx: its known issues
    assert {m["name"] for m in doc["missing"]} == set(ids[3:])
    assert {g["check"] for g in doc["groups"]} >= {"driver.module", "driver.devices"}


def test_send_command_carries_the_concurrency_limits(aws: tuple[Any, Any], tmp_path: Path) -> None:
    ec2, ssm = aws
    ids = launch(ec2, 2)
    fleet = ScenarioFleet(ec2, ssm, dict.fromkeys(ids, "garbage"), tmp_path)
    options = CollectOptions(instance_ids=tuple(ids), concurrency="10%", max_errors="3", timeout=90)
    clock = Clock()
    collect(fleet, options, tmp_path / "out", sleep=clock.sleep, clock=clock)
    (command,) = ssm.list_commands()["Commands"]
    assert (command["MaxConcurrency"], command["MaxErrors"]) == ("10%", "3")
    assert command["DocumentName"] == "AWS-RunShellScript"
    assert command["Parameters"]["executionTimeout"] == ["90"]


def test_a_rerun_asks_only_hosts_without_a_snapshot_and_refresh_asks_all(
    aws: tuple[Any, Any], tmp_path: Path
) -> None:
    ec2, ssm = aws
    ids = launch(ec2, 3)
    hosts = {ids[0]: HEALTHY, ids[1]: HEALTHY, ids[2]: "hangs"}
    fleet = ScenarioFleet(ec2, ssm, hosts, tmp_path)
    out, clock = tmp_path / "out", Clock()
    collect(fleet, OPTIONS, out, sleep=clock.sleep, clock=clock)
    assert list(not_collected(out)) == [ids[2]]

    hosts[ids[2]] = BROKEN  # it answers this time
    fleet.asked.clear()
    again = collect(fleet, OPTIONS, out, sleep=clock.sleep, clock=clock)
    assert fleet.asked == [ids[2]]
    assert sorted(again.skipped) == sorted(ids[:2]) and again.collected == [ids[2]]
    assert not_collected(out) == {}

    fleet.asked.clear()
    collect(
        fleet, CollectOptions(tags=OPTIONS.tags, refresh=True), out, sleep=clock.sleep, clock=clock
    )
    assert sorted(fleet.asked) == ids


def test_throttling_backs_off_and_still_collects(aws: tuple[Any, Any], tmp_path: Path) -> None:
    ec2, ssm = aws
    (instance,) = launch(ec2, 1)
    fleet = ScenarioFleet(ec2, ssm, {instance: HEALTHY}, tmp_path)
    fleet.throttle_next = 3
    clock = Clock()
    result = collect(fleet, OPTIONS, tmp_path / "out", sleep=clock.sleep, clock=clock)
    assert result.collected == [instance]
    assert clock.naps[:4] == [1.0, 2.0, 4.0, 8.0]  # doubled after each throttled sweep


def test_more_than_50_instances_are_sent_in_batches(aws: tuple[Any, Any], tmp_path: Path) -> None:
    ec2, ssm = aws
    ids = launch(ec2, 120)
    fleet = ScenarioFleet(ec2, ssm, dict.fromkeys(ids, "garbage"), tmp_path)
    clock = Clock()
    result = collect(fleet, OPTIONS, tmp_path / "out", sleep=clock.sleep, clock=clock)
    # (moto's list_commands mixes up InstanceIds between commands, so count what was sent)
    assert fleet.batches == [50, 50, 20]
    assert len(ssm.list_commands()["Commands"]) == 3
    assert len(result.missing) == 120


def test_an_interrupted_collection_keeps_what_arrived(aws: tuple[Any, Any], tmp_path: Path) -> None:
    ec2, ssm = aws
    ids = launch(ec2, 2)

    class Interrupted(ScenarioFleet):
        def invocation(self, command_id: str, instance_id: str) -> Invocation:
            if instance_id == ids[1]:
                raise KeyboardInterrupt
            return super().invocation(command_id, instance_id)

    fleet = Interrupted(ec2, ssm, dict.fromkeys(ids, HEALTHY), tmp_path)
    clock = Clock()
    with pytest.raises(KeyboardInterrupt):
        collect(fleet, OPTIONS, tmp_path / "out", sleep=clock.sleep, clock=clock)
    assert (tmp_path / "out" / f"{ids[0]}.json").exists()
    assert not list((tmp_path / "out").glob(".*.partial"))


def test_access_denied_is_a_clear_error_naming_the_policy(tmp_path: Path) -> None:
    from botocore.stub import Stubber

    from neuron_env.errors import OperationFailed

    ec2 = boto3.client("ec2", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="y")
    ssm = boto3.client("ssm", region_name=REGION, aws_access_key_id="x", aws_secret_access_key="y")
    with Stubber(ec2) as stub:
        stub.add_client_error(
            "describe_instances", "UnauthorizedOperation", "You are not authorized"
        )
        with pytest.raises(OperationFailed) as caught:
            collect(SsmGateway(ec2, ssm), OPTIONS, tmp_path / "out")
    assert "AWS denied ec2:DescribeInstances (UnauthorizedOperation)" in caught.value.message
    assert caught.value.hint is not None and f"'{command('fleet', 'policy')}'" in caught.value.hint


# --- the CLI's own paths -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["-o", "out"], "Name the instances"),
        (["--targets", "Cluster=a", "-o", "out"], "is not tag:KEY=VALUE"),
        (["--targets", "tag:Cluster=a", "--concurrency", "lots", "-o", "out"], "not a count"),
    ],
)
def test_bad_input_exits_2(cli: CliRunner, args: list[str], says: str) -> None:
    env = {"AWS_REGION": REGION, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}
    result = cli("fleet", "collect", *args, env=env)
    assert result.returncode == 2, result.stderr
    assert says in result.stderr


def test_an_output_that_is_a_file_is_bad_input_and_stays_as_it_was(
    cli: CliRunner, tmp_path: Path
) -> None:
    env = {"AWS_REGION": REGION, "AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "y"}
    taken = tmp_path / "snapshots"
    taken.write_text("notes\n")
    for subcommand in ("collect", "doctor"):
        result = cli("fleet", subcommand, "--targets", "tag:Cluster=a", "-o", str(taken), env=env)
        assert result.returncode == 2, result.stderr
        said = flat(result.stderr)
        assert f"--output {taken} exists and is not a directory." in said
        assert "Traceback" not in result.stderr
    assert taken.read_text() == "notes\n"


def test_no_region_is_a_clear_failure(cli: CliRunner, tmp_path: Path) -> None:
    env = {k: "" for k in ("AWS_REGION", "AWS_DEFAULT_REGION")}
    env |= {"AWS_CONFIG_FILE": str(tmp_path / "none"), "HOME": str(tmp_path)}
    result = cli("fleet", "collect", "--targets", "tag:Cluster=a", "-o", "out", env=env)
    assert result.returncode == 1 and "No AWS region" in result.stderr


def test_policy_lists_exactly_what_collect_calls(cli: CliRunner) -> None:
    policy = json.loads(cli("fleet", "policy").stdout)
    actions = {
        a
        for s in policy["Statement"]
        for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])
    }
    assert actions == {
        "ec2:DescribeInstances", "ssm:DescribeInstanceInformation", "ssm:SendCommand",
        "ssm:GetCommandInvocation",
    }  # fmt: skip


def test_the_script_is_valid_shell_and_quotes_paths(tmp_path: Path) -> None:
    from neuron_env.fleet.collect import facts_script

    script = tmp_path / "facts.sh"
    script.write_text(
        "\n".join(facts_script(CollectOptions(python="/opt/my venv/bin/python'x"))) + "\n"
    )
    subprocess.run(["bash", "-n", str(script)], check=True)
    assert_shellcheck_clean(script, shell="bash")
    assert "python='/opt/my venv/bin/python'\"'\"'x'" in script.read_text()
    assert os.access(script, os.R_OK)


def test_the_collect_json_envelope(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    from neuron_env.fleet.cli import _print_collect
    from neuron_env.fleet.collect import CollectResult
    from neuron_env.fleet.model import Missing

    result = CollectResult(["i-1"], ["i-2"], [Missing("i-3", "not managed by Systems Manager")])
    _print_collect(result, tmp_path, as_json=True)
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema"] == "neuron-env/fleet-collect/v1"
    assert set(doc) == {
        "schema",
        "neuron_env_version",
        "command",
        "status",
        "exit_code",
        "errors",
        "directory",
        "collected",
        "skipped",
        "missing",
    }
    assert doc["missing"] == [{"name": "i-3", "reason": "not managed by Systems Manager"}]


def test_the_next_step_after_collect_runs_as_pasted_in_a_fresh_shell(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from neuron_env.fleet.cli import _print_collect
    from neuron_env.fleet.collect import CollectResult

    folder = tmp_path / "my snapshots"
    folder.mkdir()
    shutil.copy(DATA / "snapshots" / "torch-2.13-container.json", folder / "i-1.json")
    _print_collect(CollectResult(["i-1"], [], []), folder, as_json=False)
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Next: ")]
    done = in_fresh_shell(line.removeprefix("Next: "), tmp_path)
    assert done.returncode in (0, 1), done.stderr  # judged: not 127, not a bad path
    assert "i-1" in done.stdout
