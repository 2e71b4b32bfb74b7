"""The JSON envelopes are a public contract: these tests pin their shape.

Changing an asserted key is a breaking change: bump the envelope's ``/vN`` and say so in the README.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import CliRunner

pytestmark = pytest.mark.integration

ENVELOPE = {"schema", "neuron_env_version"}


def run_json(cli: CliRunner, *args: str) -> dict[str, object]:
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_matrix_list_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "matrix", "list", "--json")
    assert set(doc) == ENVELOPE | {"releases"}
    assert doc["schema"] == "neuron-env/matrix-list/v1"
    (first, *_) = doc["releases"]  # type: ignore[misc]
    assert set(first) == {"version", "date", "status", "latest", "pairings", "wheels_for", "origin"}


def test_matrix_resolve_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "matrix", "resolve", "--torch", "2.14", "--json")
    assert set(doc) == ENVELOPE | {"request", "target"}
    target = doc["target"]
    assert isinstance(target, dict)
    assert set(target) == {
        "release",
        "release_status",
        "torch",
        "torch_neuronx",
        "python",
        "os",
        "arch",
        "instance_type",
        "pins",
        "system_packages",
        "notes",
    }
    assert set(target["pins"][0]) == {"name", "spec", "index", "index_url", "confirmed", "note"}
    assert set(target["notes"][0]) == {"level", "code", "message"}
    assert set(target["system_packages"][0]) == {"name", "role", "version", "required", "confirmed"}


def test_matrix_diff_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "matrix", "diff", "2.33.0", "2.33.1", "--json")
    assert set(doc) == ENVELOPE | {"old", "new", "changes"}
    assert set(doc["changes"][0]) == {"key", "path", "kind", "before", "after"}  # type: ignore[index]


def test_matrix_validate_envelope(cli: CliRunner) -> None:
    from neuron_env.resources import shipped_matrix_dir

    doc = run_json(cli, "matrix", "validate", str(shipped_matrix_dir() / "2.33.0.toml"), "--json")
    assert set(doc) == ENVELOPE | {"files"}
    assert set(doc["files"][0]) == {"file", "valid", "release"}  # type: ignore[index]


def test_install_dry_run_envelope(cli: CliRunner, tmp_path: Path) -> None:
    import sys

    from neuron_env.resources import shipped_matrix_dir

    matrices = tmp_path / "matrices"
    matrices.mkdir()
    (matrices / "2.90.0.toml").write_text(
        (Path(__file__).parents[1] / "data/install/matrix/2.90.0.toml").read_text()
    )
    assert shipped_matrix_dir().is_dir()
    doc = run_json(
        cli, "--matrix-dir", str(matrices), "install", "--torch", "2.14", "--venv",
        str(tmp_path / "env"), "--python", sys.executable, "--os", "ubuntu-26.04",
        "--dry-run", "--json",
    )  # fmt: skip
    assert doc["schema"] == "neuron-env/install/v1"
    assert set(doc) == ENVELOPE | {"plan", "dry_run", "result"}
    plan = doc["plan"]
    assert isinstance(plan, dict)
    assert set(plan) == {
        "release", "release_status", "torch", "torch_neuronx", "python", "os", "arch", "venv",
        "action", "base_python", "backend", "packages", "routes", "wheelhouse", "offline",
        "guards", "notes",
    }  # fmt: skip
    assert set(plan["packages"][0]) == {"name", "spec", "route", "confirmed", "note", "installed"}
    assert set(plan["routes"][0]) == {"name", "url", "origin", "serves"}
    assert set(plan["guards"]) == {"placeholders", "legacy_xla", "neuron_names"}


def test_install_system_envelope(cli: CliRunner) -> None:
    sysroot = Path(__file__).parents[1] / "data/install/hosts/ubuntu-24.04"
    doc = run_json(cli, "install", "--system", "--sysroot", str(sysroot), "--json")
    assert doc["schema"] == "neuron-env/install-system/v1"
    assert set(doc) == ENVELOPE | {"system", "executed"}
    system = doc["system"]
    assert isinstance(system, dict)
    assert set(system) == {"release", "os", "codename", "kernel", "steps", "notes"}
    assert set(system["steps"][0]) == {"summary", "argv", "write", "content", "runnable", "display"}


def test_download_dry_run_envelope(cli: CliRunner, tmp_path: Path) -> None:
    doc = run_json(
        cli, "download", "--torch", "2.14", "-d", str(tmp_path / "w"), "--python-version", "3.12",
        "--os", "ubuntu-26.04", "--dry-run", "--json",
    )  # fmt: skip
    assert doc["schema"] == "neuron-env/download/v1"
    assert set(doc) == ENVELOPE | {"plan", "dest", "wheelhouse"}
