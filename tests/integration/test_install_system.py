"""``neuron-env install --system``: the apt steps, printed, refused without root, and run."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, cli_argv
from tests.support.indexes import DATA
from tests.support.install_helpers import NeuronEnv, flat

pytestmark = pytest.mark.integration

UBUNTU = DATA / "hosts" / "ubuntu-24.04"
DEBIAN = DATA / "hosts" / "debian-12"


def system(neuron_env: NeuronEnv, sysroot: Path, *args: str) -> subprocess.CompletedProcess[str]:
    result = neuron_env("install", "--system", "--sysroot", str(sysroot), *args)
    return subprocess.CompletedProcess([], result.returncode, result.stdout, result.stderr)


def test_steps_pin_confirmed_versions_and_leave_unconfirmed_ones_unpinned(
    neuron_env: NeuronEnv,
) -> None:
    result = system(neuron_env, UBUNTU)
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "apt-get install -y 'aws-neuronx-dkms=2.31.7.0*' aws-neuronx-runtime-lib" in out
    assert (
        "Neuron 2.90.0 does not confirm the versions of aws-neuronx-runtime-lib: they are "
        "installed unpinned"
    ) in flat(out)
    assert "Optional: aws-neuronx-oci-hook=2.19.65.0* (for containers)." in out
    assert (
        "printf '%s\\n' 'deb [signed-by=/etc/apt/keyrings/neuron.gpg] "
        "https://apt.repos.neuron.amazonaws.com noble main' > /etc/apt/sources.list.d/neuron.list"
    ) in out
    assert "apt-get install -y linux-headers-6.8.0-1021-aws" in out
    assert "Nothing was run." in out


def test_install_system_hint_keeps_release(neuron_env: NeuronEnv) -> None:
    result = system(neuron_env, UBUNTU, "--release", "2.33.1")
    assert result.returncode == 0, result.stderr
    hint = flat(result.stdout).split("To run these steps: ")[1]
    assert hint.startswith("sudo ")
    assert "install --system --release 2.33.1 --execute" in hint


def test_steps_for_ubuntu_26_04_on_another_host_use_its_codename(neuron_env: NeuronEnv) -> None:
    result = system(neuron_env, UBUNTU, "--os", "ubuntu-26.04")
    assert result.returncode == 0, result.stderr
    assert "https://apt.repos.neuron.amazonaws.com resolute main'" in result.stdout


def test_json_steps_are_argument_lists(neuron_env: NeuronEnv) -> None:
    result = system(neuron_env, UBUNTU, "--json", "--release", "2.33.1")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["executed"] is False
    steps = doc["system"]["steps"]
    install = steps[-1]["argv"]
    assert install[:3] == ["apt-get", "install", "-y"]
    assert "aws-neuronx-runtime-lib=2.35.33.0*" in install  # the 2.33.1 patch version
    for step in steps:
        if step["argv"]:
            assert shlex.split(step["display"]) == step["argv"]


def test_a_release_without_confirmed_versions_installs_unpinned_with_warnings(
    neuron_env: NeuronEnv,
) -> None:
    result = system(neuron_env, UBUNTU, "--release", "2.34.0")
    assert result.returncode == 0, result.stderr
    out = flat(result.stdout)
    assert "Neuron 2.34.0 does not confirm the versions of" in out
    for name in ("aws-neuronx-dkms", "aws-neuronx-runtime-lib", "aws-neuronx-collectives"):
        assert name in out
        assert f"{name}=" not in out


def test_non_ubuntu_host_is_refused(neuron_env: NeuronEnv) -> None:
    result = system(neuron_env, DEBIAN)
    assert result.returncode == 2
    assert "apt repository for Ubuntu; this host is 'debian-12'" in flat(result.stderr)


def test_execute_without_root_is_refused_before_anything_runs(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    # A user namespace without a uid mapping: the process runs as "nobody".
    argv = ["unshare", "--user", *cli_argv("install", "--system", "--execute", "--yes")]
    argv += ["--sysroot", str(UBUNTU)]
    proc = subprocess.run(argv, env=isolated_env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2
    assert "--execute changes the system and needs root; nothing was run." in flat(proc.stderr)
    assert f"sudo {NEURON_ENV} install --system --release " in flat(proc.stderr)
    assert flat(proc.stderr).endswith(" --execute")


def test_execute_without_yes_on_a_non_interactive_terminal_is_refused(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    argv = [*_as_root(), *cli_argv("install", "--system", "--execute")]
    proc = subprocess.run(
        [*argv, "--sysroot", str(UBUNTU)], env=isolated_env, capture_output=True, text=True,
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "Add --yes" in proc.stderr


def test_execute_runs_every_step_in_order(isolated_env: dict[str, str], tmp_path: Path) -> None:
    sysroot = tmp_path / "root"
    shutil.copytree(UBUNTU, sysroot)
    calls = tmp_path / "calls.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("apt-get", "curl", "gpg"):  # stand-ins that record their arguments
        script = bin_dir / tool
        script.write_text(f'#!/bin/sh\necho "{tool} $*" >> "{calls}"\n')
        script.chmod(0o755)
    env = {**isolated_env, "PATH": f"{bin_dir}{os.pathsep}{isolated_env['PATH']}"}
    argv = [*_as_root(), *cli_argv("install", "--system", "--execute", "--yes")]
    proc = subprocess.run(
        [*argv, "--sysroot", str(sysroot), "--log", str(tmp_path / "system.log")],
        env=env, capture_output=True, text=True, cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    recorded = calls.read_text().splitlines()
    assert recorded[0] == "apt-get update"
    assert recorded[1] == "apt-get install -y ca-certificates curl gnupg"
    assert recorded[2].startswith("curl -fsSL --create-dirs -o /etc/apt/keyrings/neuron.asc")
    assert recorded[3].startswith("gpg --dearmor --yes -o /etc/apt/keyrings/neuron.gpg")
    assert recorded[-1] == ("apt-get install -y aws-neuronx-dkms=2.31.7.0* aws-neuronx-runtime-lib")
    sources = sysroot / "etc/apt/sources.list.d/neuron.list"
    assert "noble main" in sources.read_text()
    assert "system packages installed" in proc.stdout


def _as_root() -> list[str]:
    """Run as root: directly when the tests are root, else in a user namespace mapped to root."""
    return [] if os.geteuid() == 0 else ["unshare", "--user", "--map-root-user"]
