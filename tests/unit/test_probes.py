"""Probes read through a sysroot: parsing quirks of the files they read."""

from __future__ import annotations

import sys
from pathlib import Path

from neuron_env.probe.collect import ProbeOptions, collect_facts
from neuron_env.probe.driver import device_nodes, module_loaded
from neuron_env.probe.environment import probe_environment
from neuron_env.probe.os_release import glibc_version, in_container, parse_os_release
from neuron_env.probe.system import dpkg_packages


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_os_release_quoting_and_comments() -> None:
    values = parse_os_release(
        "# comment\nID=ubuntu\nPRETTY_NAME=\"Ubuntu 26.04 LTS\"\nX='a b'\nbroken\n"
    )
    assert values == {"ID": "ubuntu", "PRETTY_NAME": "Ubuntu 26.04 LTS", "X": "a b"}


def test_dpkg_status_keeps_installed_neuron_packages_only() -> None:
    status = (
        "Package: aws-neuronx-dkms\nStatus: install ok installed\nVersion: 2.31.8.0\n"
        "Description: driver\n Version: 9.9 (a continuation line, not a field)\n\n"
        "Package: aws-neuronx-tools\nStatus: deinstall ok config-files\nVersion: 2.33.38.0\n\n"
        "Package: bash\nStatus: install ok installed\nVersion: 5.2\n"
    )  # fmt: skip
    assert dict(dpkg_packages(status)) == {"aws-neuronx-dkms": "2.31.8.0"}


def test_glibc_is_read_from_the_sysroot_libc(tmp_path: Path) -> None:
    write(tmp_path, "usr/lib64/libc.so.6", "... stable release version 2.34.\n")
    assert glibc_version(tmp_path) == "2.34"
    assert glibc_version(tmp_path / "empty") is None


def test_container_markers(tmp_path: Path) -> None:
    assert not in_container(tmp_path)
    write(tmp_path, "proc/1/cgroup", "0::/kubepods/burstable/pod1234\n")
    assert in_container(tmp_path)


def test_module_and_device_nodes(tmp_path: Path) -> None:
    write(tmp_path, "proc/modules", "neuronx 1 0 - Live 0x0\n")
    assert not module_loaded(tmp_path)  # a different module whose name starts the same
    for name in ("neuron10", "neuron2", "neuron_extra"):
        write(tmp_path, f"dev/{name}", "")
    assert [node.path for node in device_nodes(tmp_path)] == ["/dev/neuron2", "/dev/neuron10"]


def test_cache_directory_that_does_not_exist_yet_is_judged_by_its_parent(tmp_path: Path) -> None:
    facts = probe_environment(tmp_path, {"TORCH_NEURONX_DEBUG_DIR": "/var/cache/neuron/debug"})
    debug = next(d for d in facts.cache_dirs if d.variable == "TORCH_NEURONX_DEBUG_DIR")
    assert debug.path == "/var/cache/neuron/debug" and not debug.exists
    assert debug.writable and debug.free_bytes is not None


def test_only_neuron_related_variables_are_recorded(tmp_path: Path) -> None:
    facts = probe_environment(
        tmp_path, {"NEURON_RT_LOG_LEVEL": "INFO", "HOME": "/root", "XLA_USE_BF16": "1"}
    )
    assert facts.variables == {"NEURON_RT_LOG_LEVEL": "INFO", "XLA_USE_BF16": "1"}


def test_a_failing_probe_is_recorded_and_the_others_survive(tmp_path: Path) -> None:
    missing_python = tmp_path / "no-such-python"
    facts = collect_facts(ProbeOptions(sysroot=tmp_path, python=missing_python,
                                       environ={"AWS_EC2_METADATA_DISABLED": "true"}))  # fmt: skip
    assert facts.python is None
    (error,) = facts.probe_errors
    assert error.probe == "python" and error.kind == "error" and "cannot run" in error.message
    assert facts.os is not None and facts.ec2 is not None


def test_a_probe_past_its_timeout_is_recorded_as_a_timeout(tmp_path: Path) -> None:
    slow = write(tmp_path, "slow-python", "#!/bin/sh\nexec sleep 30\n")
    slow.chmod(0o755)
    options = ProbeOptions.capped(
        1.0, sysroot=tmp_path, python=slow, environ={"AWS_EC2_METADATA_DISABLED": "true"}
    )
    facts = collect_facts(options)
    assert facts.python is None
    assert [e.probe for e in facts.probe_errors] == ["python"]
    assert facts.duration_s < 10


def test_the_python_probe_reads_the_running_interpreter() -> None:
    facts = collect_facts(
        ProbeOptions(python=Path(sys.executable), environ={"AWS_EC2_METADATA_DISABLED": "true"})
    )
    assert facts.python is not None
    assert facts.python.version.startswith(f"{sys.version_info.major}.{sys.version_info.minor}")
    assert "packaging" in facts.python.distributions
