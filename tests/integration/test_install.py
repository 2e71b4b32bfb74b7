"""``neuron-env install`` end to end: real venvs, real pip and uv, real indexes on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from neuron_env.probe.os_release import probe_os
from tests.support.cli import Result
from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    NeuronEnv,
    StartIndexes,
    flat,
    install,
    install_env,
    installed,
    leftovers,
    python_here,
    run_cli,
    run_in,
    write_install_matrix,
)

pytestmark = pytest.mark.integration

BACKENDS = ["uv", "pip"]
NEURON_NAMES = ("torch-neuronx", "neuronx-cc", "nki")


@dataclass(frozen=True)
class CleanInstall:
    """One clean install into ``venv`` (beside nothing else under ``parent``) and what it said."""

    result: Result
    venv: Path
    parent: Path
    running: Indexes


@pytest.fixture(scope="module", params=BACKENDS)
def clean_install(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[CleanInstall]:
    """The same clean install, run once per backend for the tests that read what it did."""
    tmp = tmp_path_factory.mktemp(f"clean-{request.param}")
    running = start_indexes(tmp / "indexes")
    parent = tmp / "target"
    parent.mkdir()
    venv = parent / "env"
    env = install_env(tmp, write_install_matrix(tmp / "matrix"))
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    result = run_cli(env, *args, *running.args(), "--backend", request.param)
    yield CleanInstall(result, venv, parent, running)
    running.stop()


def test_clean_install_takes_each_package_from_its_own_index(clean_install: CleanInstall) -> None:
    result, venv, running = clean_install.result, clean_install.venv, clean_install.running
    assert result.returncode == 0, result.stderr
    versions = installed(venv)
    assert versions["torch"] == "2.14.0+cpu"  # the PyTorch CPU build, not the default index's
    assert versions["torch-neuronx"] == "2.14.3.0.1"  # not the attacker's 99.0 or 2.14.3.0.99
    assert versions["nki"] == "0.7.0"  # not the attacker's 99.0 or the 0.0.1 placeholder
    assert versions["neuronx-cc"] == "2.28.7631.0"
    default_requests = running.requests("default")
    for name in (*NEURON_NAMES, "torch"):
        assert f"/simple/{name}/" not in default_requests, f"{name} looked up on the default index"
    assert f"Created {venv}" in result.stdout
    assert "import torch → 2.14.0+cpu" in result.stdout


def test_swapped_environment_works_at_its_final_path(clean_install: CleanInstall) -> None:
    result, venv = clean_install.result, clean_install.venv
    assert result.returncode == 0, result.stderr
    assert run_in(venv, "neuron-hello") == "torch_neuronx 2.14.3.0.1"
    assert run_in(venv, "torchrun") == "torch 2.14.0+cpu"
    assert run_in(venv, "python", "-c", "import sys; print(sys.prefix)") == str(venv)
    activated = subprocess.run(
        ["bash", "-c", 'source "$1/bin/activate" && echo "$VIRTUAL_ENV"', "-", str(venv)],
        capture_output=True,
        text=True,
        check=True,
    )
    assert activated.stdout.strip() == str(venv)
    assert "staging" not in "".join(
        p.read_text(errors="replace") for p in (venv / "bin").iterdir() if p.is_file()
    )
    assert leftovers(clean_install.parent) == []


def test_dry_run_prints_the_plan_and_touches_nothing(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path
) -> None:
    running = indexes()
    venv = tmp_path / "env"
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(venv), "--python", python_here(),
        *running.args(), "--dry-run", "--json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)["plan"]
    routes = {r["name"]: r for r in plan["routes"]}
    assert routes["neuron"]["serves"] == list(NEURON_NAMES)
    assert routes["neuron"]["url"] == running.urls["neuron"]
    assert routes["pytorch-cpu"]["serves"] == ["torch"]
    assert routes["default"]["url"] == running.urls["default"]
    assert (plan["python"], plan["os"]) == ("3.11", probe_os(Path("/")).key)  # the host's facts
    pins = {p["name"]: (p["spec"], p["route"]) for p in plan["packages"]}
    assert pins["torch-neuronx"] == ("==2.14.3.0.*", "neuron")
    assert pins["torch"] == ("==2.14.0", "pytorch-cpu")
    assert not venv.exists()
    assert leftovers(tmp_path) == []
    assert all(running.requests(name) == "" for name in ("neuron", "pytorch", "default"))


def test_dry_run_text_lists_every_pin_and_its_index(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path
) -> None:
    running = indexes()
    result = install(neuron_env, tmp_path / "env", running.args(), "--dry-run")
    assert result.returncode == 0, result.stderr
    out = result.stdout
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert "==2.14.3.0.*" in lines["torch-neuronx"]
    assert running.urls["neuron"] in lines["torch-neuronx"]
    assert running.urls["pytorch"] in lines["torch"]
    assert running.urls["default"] in lines["everything"]
    assert "Dry run: nothing was changed." in out
    assert not (tmp_path / "env").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_neuron_dependency_only_on_the_default_index_is_refused(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path, backend: str
) -> None:
    running = indexes("neuron-dependency-from-default")
    venv = tmp_path / "env"
    result = install(neuron_env, venv, running.args(), "--backend", backend)
    assert result.returncode == 1
    assert "libneuronxla" in flat(result.stderr)
    assert "Nothing was changed" in flat(result.stderr)
    assert not venv.exists()
    assert leftovers(tmp_path) == []


def test_json_result_reports_what_was_installed(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path
) -> None:
    venv = tmp_path / "env"
    result = install(neuron_env, venv, indexes().args(), "--json")
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)  # stdout holds the envelope alone
    assert doc["schema"] == "neuron-env/install/v1"
    assert doc["dry_run"] is False
    outcome = doc["result"]
    assert set(outcome) == {
        "venv", "action", "backend", "versions", "previous", "torch_import", "duration_s",
        "timings", "log",
    }  # fmt: skip
    assert set(outcome["timings"]) == {"create", "install", "verify", "swap", "cleanup"}
    assert outcome["versions"] == {
        "torch": "2.14.0+cpu",
        "torch-neuronx": "2.14.3.0.1",
        "neuronx-cc": "2.28.7631.0",
        "nki": "0.7.0",
    }
    assert outcome["torch_import"] == "2.14.0+cpu"
    assert Path(outcome["log"]).is_file()


def test_the_target_can_be_named_by_its_interpreter_or_be_the_active_venv(
    neuron_env: NeuronEnv, tmp_path: Path, isolated_env: dict[str, str]
) -> None:
    import sys

    venv = tmp_path / "existing"
    uv = Path(sys.executable).with_name("uv")
    subprocess.run([str(uv), "venv", "-q", "--python", python_here(), str(venv)], check=True)
    link = tmp_path / "current"
    link.symlink_to(venv)
    for args, env in (
        (["--python", str(venv / "bin" / "python")], {}),
        ([], {"VIRTUAL_ENV": str(venv)}),
        (["--venv", str(link)], {}),
    ):
        result = neuron_env("install", "--torch", "2.14", *args, "--dry-run", "--json", env=env)
        assert result.returncode == 0, result.stderr
        plan = json.loads(result.stdout)["plan"]
        assert (plan["venv"], plan["action"]) == (str(venv), "upgrade")
