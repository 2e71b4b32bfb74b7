"""Host facts added for issue 29 (device holders, DKMS builds, EFA binding, Kubernetes) stay
optional in snapshots: one taken before neuron-env collected them is still judged, and the checks
that need them say they were not collected instead of guessing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import CliRunner
from tests.support.hosts import build_sysroot, load_scenario, run_scenario_doctor

pytestmark = pytest.mark.integration

NEW_FACTS = {
    "driver": (
        "holders",
        "holders_unreadable",
        "host_pid_namespace",
        "dkms_builds",
        "module_for_kernel",
    ),
    "system": ("efa_bound",),
    "os": ("kubernetes",),
}


def test_a_snapshot_from_before_these_facts_is_judged_without_them(
    cli: CliRunner, tmp_path: Path
) -> None:
    sysroot = build_sysroot(load_scenario("healthy-trn2-ubuntu-26.04"), tmp_path)
    taken = cli("facts", "--sysroot", str(sysroot), env={"AWS_EC2_METADATA_DISABLED": "true"})
    assert taken.returncode == 0, taken.stderr
    doc = json.loads(taken.stdout)
    for section, keys in NEW_FACTS.items():
        for key in keys:
            assert key in doc["facts"][section]
            del doc["facts"][section][key]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))

    result = cli("doctor", "--facts", str(old), "--format", "json")
    assert result.returncode in (0, 1), result.stderr
    findings = {f["check"]: f for f in json.loads(result.stdout)["findings"]}
    assert findings["driver.cores-held"]["status"] == "skip"
    assert "older neuron-env" in findings["driver.cores-held"]["summary"]
    assert findings["driver.dkms-kernel"]["status"] == "ok"  # the module is loaded: proof enough


def test_the_facts_snapshot_records_holders_dkms_builds_and_efa_binding(
    cli: CliRunner, tmp_path: Path
) -> None:
    sysroot = build_sysroot(load_scenario("cores-held"), tmp_path)
    taken = cli("facts", "--sysroot", str(sysroot), env={"AWS_EC2_METADATA_DISABLED": "true"})
    facts = json.loads(taken.stdout)["facts"]
    assert facts["driver"]["holders"] == [
        {
            "pid": 4242,
            "command": "python train.py --epochs 3",
            "devices": [f"/dev/neuron{i}" for i in range(8)],
        }
    ]
    assert facts["driver"]["dkms_builds"] == [{"version": "2.31.8.0", "kernel": "6.17.0-1004-aws"}]
    assert facts["driver"]["module_for_kernel"] is None  # loaded: the module tree is not walked
    assert len(facts["system"]["efa_bound"]) == 16


def test_the_smoke_test_refuses_to_start_on_cores_another_process_holds(tmp_path: Path) -> None:
    findings = run_scenario_doctor("cores-held", tmp_path)
    smoke = findings["device.smoke"]
    assert smoke["status"] == "fail"
    assert smoke["summary"].startswith(
        "Not started: NeuronCores in use: pid 4242 (python train.py --epochs 3) holds"
    )
    assert "export NEURON_RT_VISIBLE_CORES=32-63" in smoke["fix"]
    assert findings["driver.cores-held"]["summary"] in smoke["summary"]  # the same words


def test_the_smoke_test_starts_when_the_visible_cores_are_free(tmp_path: Path) -> None:
    findings = run_scenario_doctor("cores-held-free-cores-chosen", tmp_path)
    # It ran (and fails: the scenario's target has no real torch), rather than being refused.
    assert not findings["device.smoke"]["summary"].startswith("Not started")


def test_device_commands_refuse_held_cores_with_the_doctor_words(tmp_path: Path) -> None:
    from neuron_env.device_gate import refuse_on_held_cores
    from neuron_env.errors import OperationFailed

    sysroot = build_sysroot(load_scenario("cores-held"), tmp_path)
    with pytest.raises(OperationFailed) as refused:
        refuse_on_held_cores("neuron", sysroot)
    assert refused.value.exit_code == 1
    assert "Not started: NeuronCores in use: pid 4242 (python train.py --epochs 3)" in str(
        refused.value.message
    )
    assert refused.value.hint and "NEURON_RT_VISIBLE_CORES=32-63" in refused.value.hint
    refuse_on_held_cores("cpu", sysroot)  # another device: its cores are not Neuron's


def test_device_commands_offer_only_cores_on_devices_this_container_has(tmp_path: Path) -> None:
    from neuron_env.device_gate import refuse_on_held_cores
    from neuron_env.errors import OperationFailed

    # A container given /dev/neuron0-3 (docker run --device ...), its own process holding them;
    # the host's sysfs still lists all 16 devices, whose free cores 16-63 are not this container's.
    sysroot = build_sysroot(load_scenario("cores-held"), tmp_path)
    for node in sysroot.glob("dev/neuron*"):
        if int(node.name.removeprefix("neuron")) >= 4:
            node.unlink()
    with pytest.raises(OperationFailed) as refused:
        refuse_on_held_cores("neuron", sysroot)
    hint = refused.value.hint or ""
    assert "every device this container has is held" in hint
    assert "NEURON_RT_VISIBLE_CORES" not in hint
