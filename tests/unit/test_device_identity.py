"""The instance as the Neuron driver reports it: a family and a chip, never a size.

Each row is what the driver writes to /sys/devices/virtual/neuron_device/neuronN/info/
architecture/ on that chip (aws-neuron/aws-neuron-driver 2.24.7.0: v1/neuron_dhal_v1.c,
v2/neuron_dhal_v2.c, v3/neuron_dhal_v3.c; "ND" + the device generation, see
neuron_sysfs_metrics.c), read back through the real sysfs probe from a sysroot.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env.checks.cores import logical_cores
from neuron_env.checks.model import Context
from neuron_env.checks.platform import check_instance
from neuron_env.facts import DriverFacts, Ec2Facts, EnvFacts, HostFacts
from neuron_env.matrix import load_matrix
from neuron_env.probe.driver import sysfs_devices

RELEASE = load_matrix().latest()
NO_IMDS = Ec2Facts(on_ec2=False, reason="IMDS disabled by AWS_EC2_METADATA_DISABLED")


def sysfs_host(root: Path, devices: int, instance_type: str, name: str, arch: str) -> HostFacts:
    for n in range(devices):
        folder = root / f"sys/devices/virtual/neuron_device/neuron{n}/info/architecture"
        folder.mkdir(parents=True)
        for key, value in (("instance_type", instance_type), ("device_name", name),
                           ("arch_type", arch)):  # fmt: skip
            (folder / key).write_text(value + "\n")  # the driver's "%s\n"
    driver = DriverFacts(module_loaded=True, sysfs=sysfs_devices(root))
    return HostFacts("", str(root), ec2=NO_IMDS, driver=driver, env=EnvFacts(variables={}))


def judged(facts: HostFacts) -> tuple[str, str]:
    verdict = check_instance(facts, Context(RELEASE, "", None, ""))
    return verdict.status, verdict.summary


def test_a_trn2_without_imds_is_a_trn2_of_unknown_size(tmp_path: Path) -> None:
    facts = sysfs_host(tmp_path, 16, "Trn2", "Trainium2", "NDv3")
    status, summary = judged(facts)
    assert status == "ok"
    assert summary.startswith("Trn2 (Trainium2, NDv3, 16 devices) (from the Neuron driver's sysfs")
    assert "size unknown: IMDS disabled" in summary
    cores = logical_cores(facts, RELEASE)  # the family's chip and the devices the driver lists
    assert cores is not None and cores.count == 64
    assert "Trn2 host (16 Neuron devices)" in cores.describe()


@pytest.mark.parametrize(
    ("instance_type", "name", "arch", "reason"),
    [
        ("Inf1", "Inferentia", "NDv1", "Inferentia (Inf1) is not supported"),
        ("Inf2", "Inferentia2", "NDv3", "Inferentia2 (Inf2) is not supported"),
        ("Trn1", "Trainium1", "NDv2", "Trn1 is not supported by the native backend"),
    ],
)
def test_older_families_are_named_from_sysfs_and_judged(
    tmp_path: Path, instance_type: str, name: str, arch: str, reason: str
) -> None:
    status, summary = judged(sysfs_host(tmp_path, 1, instance_type, name, arch))
    assert status == "fail"
    assert summary.startswith(f"{instance_type} ({name}, {arch}, 1 device)")
    assert reason in summary


@pytest.mark.parametrize("spelling", ["Trn3", "trn2.48xlarge", "TRN2", "Trn2u"])
def test_a_spelling_the_driver_table_lacks_is_reported_as_read(
    tmp_path: Path, spelling: str
) -> None:
    # Trainium3's spelling is NOT CONFIRMED; a size or another case is no driver's spelling.
    facts = sysfs_host(tmp_path, 2, spelling, "Trainium3", "NDv4")
    status, summary = judged(facts)
    assert status == "warn"
    assert summary.startswith(f"The Neuron driver reports {spelling} (Trainium3, NDv4, 2 devices)")
    assert "not judged" in summary
    assert logical_cores(facts, RELEASE) is None  # no family: no core count guessed
