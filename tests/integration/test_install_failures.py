"""Every failure leaves the target exactly as it was and removes the staging directory."""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

import pytest

from tests.support.cli import cli_runner
from tests.support.install_helpers import (
    NeuronEnv,
    PrebuiltEnvs,
    StartIndexes,
    fingerprint,
    flat,
    install,
    installed,
    leftovers,
    run_in,
    start_install,
)

pytestmark = pytest.mark.integration

BACKENDS = ["uv", "pip"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_neuron_index_down_is_named_and_nothing_is_created(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path, backend: str
) -> None:
    running = indexes("neuron-index-down")
    venv = tmp_path / "env"
    result = install(neuron_env, venv, running.args(), "--backend", backend)
    assert result.returncode == 1
    assert f"the neuron index at {running.urls['neuron']} could not be reached" in flat(
        result.stderr
    )
    assert f"Nothing was changed: {venv} was not created." in flat(result.stderr)
    assert "--neuron-index" in flat(result.stderr)  # how to retry against a mirror
    assert not venv.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("corrupt-wheel", "corrupt"),
        ("hash-mismatch", "does not match the sha256"),
        ("download-cut", ("cut off", "does not match the sha256")),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_broken_downloads_are_refused(
    neuron_env: NeuronEnv,
    indexes: StartIndexes,
    tmp_path: Path,
    backend: str,
    fault: str,
    words: str | tuple[str, ...],
) -> None:
    running = indexes(fault)
    venv = tmp_path / "env"
    result = install(neuron_env, venv, running.args(), "--backend", backend)
    assert result.returncode == 1
    expected = (words,) if isinstance(words, str) else words
    assert any(w in flat(result.stderr) for w in expected), result.stderr
    assert "Nothing was changed" in flat(result.stderr)
    assert "Last lines of" in flat(result.stderr)  # the backend's own words, from the log
    assert not venv.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_upgrade_keeps_the_old_environment_until_the_new_one_verifies(
    neuron_env: NeuronEnv,
    indexes: StartIndexes,
    tmp_path: Path,
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
) -> None:
    bad = indexes("torch-reports-wrong-version", name="bad")
    venv = tmp_path / "env"
    # As that install makes it (the fault is in torch 2.14's wheel, which 2.13 does not fetch).
    prebuilt_envs.copy(venv, "--backend", backend, torch="2.13")
    before = fingerprint(venv)

    failed = install(neuron_env, venv, bad.args(), "--backend", backend)
    assert failed.returncode == 1
    assert "'import torch' reports version 2.13.0+cpu; the plan pins torch==2.14.0" in flat(
        failed.stderr
    )
    assert f"Nothing was changed: {venv} is as it was." in flat(failed.stderr)
    assert fingerprint(venv) == before
    assert leftovers(tmp_path) == []

    good = indexes(name="good")
    upgraded = install(neuron_env, venv, good.args(), "--backend", backend)
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"Upgraded {venv}" in upgraded.stdout
    versions = installed(venv)
    assert (versions["torch"], versions["torch-neuronx"]) == ("2.14.0+cpu", "2.14.3.0.1")
    assert run_in(venv, "neuron-hello") == "torch_neuronx 2.14.3.0.1"
    assert leftovers(tmp_path) == []


def test_upgrade_keeps_the_other_packages_of_the_environment(
    neuron_env: NeuronEnv,
    indexes: StartIndexes,
    tmp_path: Path,
    isolated_env: dict[str, str],
    prebuilt_envs: PrebuiltEnvs,
) -> None:
    import subprocess
    import sys

    running = indexes()
    venv = tmp_path / "env"
    prebuilt_envs.copy(venv, "--backend", "uv", torch="2.13")  # as that install makes it
    uv = Path(sys.executable).with_name("uv")
    subprocess.run(
        [str(uv), "pip", "install", "--python", str(venv / "bin" / "python"), "extra-tool",
         "--index-url", running.urls["default"]],
        env=isolated_env, check=True, capture_output=True,
    )  # fmt: skip
    result = install(neuron_env, venv, running.args())
    assert result.returncode == 0, result.stderr
    assert "2.13.3.0.1" in result.stdout  # the plan shows what the environment had
    versions = installed(venv)
    assert versions["extra-tool"] == "1.0"
    assert versions["torch-neuronx"] == "2.14.3.0.1"


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_killed_mid_download_leaves_the_target_unchanged(
    indexes: StartIndexes,
    tmp_path: Path,
    isolated_env: dict[str, str],
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
) -> None:
    running = indexes("slow-download")
    venv = tmp_path / "env"
    prebuilt_envs.copy(venv, "--backend", backend, torch="2.13")  # as that install makes it
    before = fingerprint(venv)
    proc = start_install(isolated_env, venv, running.args(), "--backend", backend)
    running.wait_for_request("pytorch", "GET /simple/torch/torch-2.14.0")
    running.kill("pytorch")
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 1, err
    assert f"Nothing was changed: {venv} is as it was." in flat(err)
    assert fingerprint(venv) == before
    assert run_in(venv, "python", "-c", "import torch; print(torch.__version__)") == "2.13.0+cpu"
    assert leftovers(tmp_path) == []


def test_ctrl_c_mid_install_exits_130_and_leaves_the_target_unchanged(
    indexes: StartIndexes,
    tmp_path: Path,
    isolated_env: dict[str, str],
    prebuilt_envs: PrebuiltEnvs,
) -> None:
    running = indexes("slow-download")
    venv = tmp_path / "env"
    prebuilt_envs.copy(venv, "--backend", "uv", torch="2.13")  # as that install makes it
    before = fingerprint(venv)
    proc = start_install(isolated_env, venv, running.args())
    running.wait_for_request("pytorch", "GET /simple/torch/torch-2.14.0")
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "Interrupted" in flat(err) and f"{venv} is as it was" in flat(err)
    assert "Traceback" not in flat(err)
    assert fingerprint(venv) == before
    assert leftovers(tmp_path) == []


def test_sigterm_mid_install_cleans_up_like_ctrl_c(
    indexes: StartIndexes, tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    running = indexes("slow-download")
    venv = tmp_path / "env"
    proc = start_install(isolated_env, venv, running.args())
    running.wait_for_request("pytorch", "GET /simple/torch/torch-2.14.0")
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 143, err
    assert f"Nothing was changed: {venv} was not created." in flat(err)
    assert not venv.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="mounts a tmpfs")
def test_a_full_disk_the_backend_does_not_name_is_named(
    isolated_env: dict[str, str], indexes: StartIndexes, tmp_path: Path
) -> None:
    """The pip backend's staging venv on a full filesystem: ``python -m venv`` reports the
    failed ensurepip as "returned non-zero exit status 1" and no more, and the install said
    "the backend failed ... Read the log and retry". A 1 MiB tmpfs, mounted in a private mount
    namespace (nothing leaks to the machine), holds the environment."""
    running = indexes()
    small = tmp_path / "small"
    small.mkdir()
    script = 'mount -t tmpfs -o size=1m,mode=0755 tmpfs "$0" && exec "$@"'
    prefix = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", script]
    run = cli_runner(tmp_path, base_env=isolated_env, prefix=[*prefix, str(small)], timeout=300)
    venv = small / "env"
    result = install(run, venv, running.args(), "--backend", "pip")
    said = flat(result.stderr)
    assert result.returncode == 1, said
    assert f"the filesystem of {small} has only" in said
    assert "a full disk is the likely cause" in said
    assert f"Nothing was changed: {venv} was not created" in said
    assert "Free space on the disk of the environment" in said
