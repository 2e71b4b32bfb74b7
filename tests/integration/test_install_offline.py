"""Air-gapped hosts: a routed wheelhouse, an offline install from it, and hash-pinned exports."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import cli_runner
from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    NeuronEnv,
    PrebuiltEnvs,
    StartIndexes,
    flat,
    install,
    installed,
    isolated_environment,
    leftovers,
)

pytestmark = pytest.mark.integration


def fill(neuron_env: NeuronEnv, urls: list[str], dest: Path, *extra: str) -> dict[str, object]:
    result = neuron_env("download", "--torch", "2.14", "-d", str(dest), *urls, "--json", *extra)
    assert result.returncode == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


@dataclass(frozen=True)
class Filled:
    """One ``download`` of the release's wheelhouse, its indexes stopped since (the air gap)."""

    doc: dict[str, object]
    house: Path
    running: Indexes

    def copy(self, tmp_path: Path) -> Path:
        """A copy of the wheelhouse that a test may change."""
        return Path(shutil.copytree(self.house, tmp_path / "wheels"))


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory, install_matrix_dir: Path) -> Filled:
    """Filled once for the tests that read, install from or tamper with the same wheelhouse."""
    tmp = tmp_path_factory.mktemp("filled")
    neuron_env = cli_runner(tmp, base_env=isolated_environment(tmp, install_matrix_dir))
    running = start_indexes(tmp / "indexes")
    try:
        doc = fill(neuron_env, running.args(), tmp / "wheels")
    finally:
        running.stop()
    return Filled(doc, tmp / "wheels", running)


def test_download_fills_a_routed_wheelhouse_with_a_hashed_manifest(filled: Filled) -> None:
    running, house, doc = filled.running, filled.house, filled.doc
    files = {w["name"]: w for w in doc["wheelhouse"]["files"]}  # type: ignore[index]
    assert {name: (w["version"], w["route"]) for name, w in files.items()} == {
        "torch": ("2.14.0+cpu", "pytorch-cpu"),
        "torch-neuronx": ("2.14.3.0.1", "neuron"),
        "neuronx-cc": ("2.28.7631.0", "neuron"),
        "nki": ("0.7.0", "neuron"),
        "filelock": ("3.13.1", "default"),
    }
    requirements = (house / "requirements.txt").read_text()
    assert requirements.count("--hash=sha256:") == 5
    assert sorted(p.name for p in house.glob("*.whl")) == sorted(w["file"] for w in files.values())
    for name in ("torch-neuronx", "nki", "neuronx-cc", "torch"):
        assert f"/simple/{name}/" not in running.requests("default")


@pytest.mark.parametrize("backend", ["uv", "pip"])
def test_offline_install_from_a_wheelhouse_needs_no_index(
    neuron_env: NeuronEnv, filled: Filled, tmp_path: Path, backend: str
) -> None:
    assert filled.running.servers == {}  # the air gap: nothing answers any more
    house = filled.copy(tmp_path)
    venv = tmp_path / "env"
    result = install(
        neuron_env, venv, ["--wheelhouse", str(house), "--offline"], "--backend", backend
    )
    assert result.returncode == 0, result.stderr
    versions = installed(venv)
    assert (versions["torch"], versions["torch-neuronx"], versions["nki"]) == (
        "2.14.0+cpu",
        "2.14.3.0.1",
        "0.7.0",
    )
    assert leftovers(tmp_path) == []


def test_tampered_wheelhouse_is_refused_before_anything_is_built(
    neuron_env: NeuronEnv, filled: Filled, tmp_path: Path
) -> None:
    house = filled.copy(tmp_path)
    (wheel,) = house.glob("nki-*.whl")
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    venv = tmp_path / "env"
    result = install(neuron_env, venv, ["--wheelhouse", str(house), "--offline"])
    assert result.returncode == 1
    assert f"{wheel.name} does not match its sha256 in the manifest" in flat(result.stderr)
    assert not venv.exists()


def test_wheelhouse_for_another_python_is_refused(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path
) -> None:
    running = indexes()
    house = tmp_path / "wheels"
    doc = fill(neuron_env, running.args(), house, "--python-version", "3.12")
    assert doc["wheelhouse"]["python"] == "3.12"  # type: ignore[index]
    result = install(neuron_env, tmp_path / "env", ["--wheelhouse", str(house), "--offline"])
    assert result.returncode == 2
    assert "was made for Neuron 2.90.0, PyTorch 2.14.0, Python 3.12" in flat(result.stderr)
    assert "--python-version 3.11" in flat(result.stderr)


def test_download_failure_leaves_no_half_filled_wheelhouse(
    neuron_env: NeuronEnv, indexes: StartIndexes, tmp_path: Path
) -> None:
    running = indexes("neuron-index-down")
    house = tmp_path / "wheels"
    result = neuron_env("download", "--torch", "2.14", "-d", str(house), *running.args())
    assert result.returncode == 1
    assert f"the neuron index at {running.urls['neuron']} could not be reached" in flat(
        result.stderr
    )
    assert not house.exists()


def test_export_pins_every_file_so_even_merged_indexes_cannot_substitute(
    neuron_env: NeuronEnv,
    indexes: StartIndexes,
    tmp_path: Path,
    isolated_env: dict[str, str],
    prebuilt_envs: PrebuiltEnvs,
) -> None:
    running = indexes()
    exported = tmp_path / "requirements.txt"
    result = neuron_env("install", "--torch", "2.14", "--export", str(exported), *running.args())
    assert result.returncode == 0, result.stderr
    text = exported.read_text()
    assert "torch-neuronx==2.14.3.0.1 \\\n    --hash=sha256:" in text
    assert "pip install --no-deps --require-hashes" in text
    # A team installs it with plain pip and the documented, merged indexes (attackers included).
    venv = tmp_path / "team-env"
    prebuilt_envs.plain_venv(venv)  # as python -m venv makes it
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "--no-deps", "--require-hashes"]
    pip += ["-r", str(exported), "--index-url", running.urls["default"]]
    pip += [
        "--extra-index-url",
        running.urls["neuron"],
        "--extra-index-url",
        running.urls["pytorch"],
    ]
    subprocess.run(pip, env=isolated_env, check=True, capture_output=True)
    versions = installed(venv)
    assert (versions["torch"], versions["torch-neuronx"], versions["nki"]) == (
        "2.14.0+cpu",
        "2.14.3.0.1",
        "0.7.0",
    )


def test_export_to_stdout_prints_only_the_requirements(
    neuron_env: NeuronEnv, indexes: StartIndexes
) -> None:
    running = indexes()
    result = neuron_env("install", "--torch", "2.14", "--export", "-", *running.args())
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line and not line.startswith("#")]
    requirement_lines = [line for line in lines if not line.strip().startswith("--hash")]
    assert len(requirement_lines) == 5
    assert all(line.endswith("\\") for line in requirement_lines)


def test_the_documented_pip_command_falls_for_the_default_index_when_neuron_is_down(
    indexes: StartIndexes,
    tmp_path: Path,
    isolated_env: dict[str, str],
    prebuilt_envs: PrebuiltEnvs,
) -> None:
    """Why routing matters: the reasoning of docs/commands/install.md,
    shown with real pip (no neuron-env)."""
    running = indexes("neuron-index-down")
    venv = tmp_path / "docs-env"
    prebuilt_envs.plain_venv(venv)  # as python -m venv makes it
    argv = [str(venv / "bin" / "python"), "-m", "pip", "install", "torch-neuronx==2.14.*"]
    argv += ["nki", "--index-url", running.urls["default"]]
    argv += [
        "--extra-index-url",
        running.urls["neuron"],
        "--extra-index-url",
        running.urls["pytorch"],
    ]
    subprocess.run(argv, env=isolated_env, check=True, capture_output=True)
    versions = installed(venv)
    assert versions["nki"] == "99.0"  # the impostor on the default index won
    assert versions["torch-neuronx"] == "2.14.3.0.99"
