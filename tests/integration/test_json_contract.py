"""The JSON envelopes are a public contract: these tests pin their shape.

Changing an asserted key is a breaking change: bump the envelope's ``/vN`` and say so in
docs/json-output.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.aws import MotoServer
from tests.support.cli import DATA, CliRunner

pytestmark = pytest.mark.integration

# Every envelope's common keys (tests/integration/test_envelope_contract.py pins their values).
ENVELOPE = {"schema", "neuron_env_version", "command", "status", "exit_code", "errors"}


def run_json(cli: CliRunner, *args: str) -> dict[str, Any]:
    result = cli(*args)
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)
    return doc


def test_matrix_list_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "matrix", "list", "--json")
    assert set(doc) == ENVELOPE | {"releases"}
    assert doc["schema"] == "neuron-env/matrix-list/v1"
    (first, *_) = doc["releases"]
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
        "companions",
    }
    assert set(target["companions"][0]) == {
        "name",
        "title",
        "spec",
        "index",
        "index_url",
        "families",
        "import_name",
        "conflicts",
        "confirmed",
        "families_confirmed",
        "note",
    }
    assert set(target["pins"][0]) == {"name", "spec", "index", "index_url", "confirmed", "note"}
    assert set(target["notes"][0]) == {"level", "code", "message"}
    assert set(target["system_packages"][0]) == {"name", "role", "version", "required", "confirmed"}


def test_matrix_diff_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "matrix", "diff", "2.33.0", "2.33.1", "--json")
    assert set(doc) == ENVELOPE | {"old", "new", "changes"}
    assert set(doc["changes"][0]) == {"key", "path", "kind", "before", "after"}


def test_matrix_validate_envelope(cli: CliRunner) -> None:
    from neuron_env.resources import shipped_matrix_dir

    doc = run_json(cli, "matrix", "validate", str(shipped_matrix_dir() / "2.33.0.toml"), "--json")
    assert set(doc) == ENVELOPE | {"files"}
    assert set(doc["files"][0]) == {"file", "valid", "release"}


def test_matrix_verify_envelope(cli: CliRunner) -> None:
    import socket

    with socket.socket() as sock:  # a port nothing listens on: the envelope of an unread index
        sock.bind(("127.0.0.1", 0))
        down = f"http://127.0.0.1:{sock.getsockname()[1]}/simple"
    quiet = {"PIP_CONFIG_FILE": "/dev/null", "PIP_INDEX_URL": ""}  # no default index
    result = cli(
        "matrix", "verify", "--neuron-index", down, "--pytorch-index", down, "--json", env=quiet
    )
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["schema"] == "neuron-env/matrix-verify/v1"
    assert set(doc) == ENVELOPE | {
        "release", "checked_on", "status", "exit_code", "counts", "indexes", "facts", "overlay",
    }  # fmt: skip
    assert set(doc["counts"]) == {"confirmed", "contradicted", "unknown"}
    assert set(doc["indexes"][0]) == {
        "name", "url", "origin", "readable", "projects", "formats", "failed_url", "reason",
        "seconds",
    }  # fmt: skip
    assert set(doc["facts"][0]) == {
        "id", "key", "subject", "status", "file_says", "index_shows", "index", "value", "guess",
    }  # fmt: skip


def test_doctor_envelope(cli: CliRunner) -> None:
    result = cli("doctor", "--format", "json", env={"AWS_EC2_METADATA_DISABLED": "true"})
    doc = json.loads(result.stdout)
    assert set(doc) == ENVELOPE | {
        "status", "exit_code", "strict", "allowed", "allowed_reasons", "counts", "release",
        "release_reason", "torch", "torch_reason", "level", "findings", "facts",
        "needs_hardware", "target", "next", "allowed_by", "config", "config_ignored",
    }  # fmt: skip
    assert doc["schema"] == "neuron-env/doctor/v1"
    assert set(doc["target"]) == {"python", "version", "chosen_by"}
    assert all(set(step) == {"argv", "shell"} for step in doc["next"])
    assert set(doc["findings"][0]) == {
        "check",
        "category",
        "title",
        "status",
        "summary",
        "detail",
        "fix",
    }
    assert set(doc["counts"]) == {"ok", "warn", "fail", "skip", "error"}


def test_facts_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "facts")
    assert set(doc) == ENVELOPE | {"facts"}
    assert doc["schema"] == "neuron-env/facts/v1"
    assert set(doc["facts"]) == {
        "collected_at", "sysroot", "hostname", "duration_s", "os", "ec2", "driver", "system",
        "python", "env", "device", "probe_errors",
    }  # fmt: skip


SUITE_KEYS = {
    "ok", "summary", "details", "level", "device", "python", "info", "problem", "counts",
    "wall_s", "allow_fallback", "peak", "cases",
}  # fmt: skip
CASE_KEYS = {
    "name", "case", "dtype", "mode", "status", "message", "behaviour", "comparisons",
    "fallback_ops", "fallback_tracked", "first_call_s", "steady_s", "repeats", "metrics",
    "warnings", "wall_s",
}  # fmt: skip
COMPARISON_KEYS = {
    "tensor", "ok", "mismatched", "total", "rtol", "atol", "max_abs", "max_rel", "scale", "used",
    "problem",
}  # fmt: skip
INFO_KEYS = {
    "device", "type", "available", "count", "python", "executable", "torch", "name",
    "accelerator", "accelerator_count", "fallback_tracking", "compile_backend", "torch_neuronx",
}  # fmt: skip


def test_smoke_envelope(cli: CliRunner, neuron_python: Path) -> None:
    doc = run_json(cli, "smoke", "--python", str(neuron_python), "--format", "json")
    assert doc["schema"] == "neuron-env/smoke/v1"
    assert set(doc) == ENVELOPE | SUITE_KEYS
    assert set(doc["info"]) == INFO_KEYS
    case = doc["cases"][0]
    assert set(case) == CASE_KEYS
    assert set(case["comparisons"][0]) == COMPARISON_KEYS


def test_selftest_envelope(cli: CliRunner, neuron_python: Path) -> None:
    doc = run_json(
        cli, "selftest", "--python", str(neuron_python), "--only", "softmax/fp32/eager",
        "--format", "json",
    )  # fmt: skip
    assert doc["schema"] == "neuron-env/selftest/v1"
    assert set(doc) == ENVELOPE | SUITE_KEYS
    assert set(doc["cases"][0]) == CASE_KEYS


def test_selftest_problem_envelope(cli: CliRunner, bare_python: Path) -> None:
    result = cli("selftest", "--python", str(bare_python), "--format", "json")
    doc = json.loads(result.stdout)
    assert set(doc) == ENVELOPE | SUITE_KEYS
    assert set(doc["problem"]) == {"kind", "message", "hint"}


def test_selftest_list_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "selftest", "--list", "--format", "json")
    assert doc["schema"] == "neuron-env/selftest-list/v1"
    assert set(doc) == ENVELOPE | {"level", "cases"}
    assert set(doc["cases"][0]) == {
        "case", "level", "kind", "summary", "dtypes", "modes", "backward", "variants", "tolerances",
    }  # fmt: skip


def test_scan_envelope(cli: CliRunner) -> None:
    corpus = str(DATA / "scan" / "corpus" / "xla_aliases.py")
    result = cli("scan", corpus, "--format", "json")
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == ENVELOPE | {
        "release", "root", "fail_on", "exit_code", "files", "counts", "rules", "findings",
    }  # fmt: skip
    assert doc["schema"] == "neuron-env/scan/v1"
    assert set(doc["counts"]) == {"error", "warning", "note"}
    assert set(doc["rules"][0]) == {
        "id", "category", "severity", "title", "description", "help_uri", "confirmed", "origin",
        "fixable",
    }  # fmt: skip
    assert set(doc["findings"][0]) == {
        "rule", "severity", "path", "line", "column", "end_line", "end_column", "message",
        "suggestion", "confirmed", "help_uri", "fix", "cell",
    }  # fmt: skip
    assert {"old", "new"} == set(next(f["fix"] for f in doc["findings"] if f["fix"]))


def test_scan_rules_envelope(cli: CliRunner) -> None:
    doc = run_json(cli, "scan", "--list-rules", "--format", "json")
    assert set(doc) == ENVELOPE | {"release", "rules"}
    assert doc["schema"] == "neuron-env/scan-rules/v1"
    assert {"xla-device", "unsupported-apis"} <= {r["id"] for r in doc["rules"]}


def test_launch_template_create_envelope(cli: CliRunner, aws: MotoServer) -> None:
    args = ["launch-template", "create", "--name", "contract", "--instance-type", "trn2.3xlarge",
            "--torch", "2.14", "--neuron-env-source", "pypi", "--json"]  # fmt: skip
    result = cli(*args, env=aws.env())
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == ENVELOPE | {
        "name", "action", "template_id", "version", "default_version", "fingerprint", "dry_run",
        "region", "notes",
    }  # fmt: skip
    assert doc["schema"] == "neuron-env/launch-template-create/v1"
    assert set(doc["notes"][0]) == {"level", "code", "message"}


def test_image_render_envelope(cli: CliRunner) -> None:
    result = cli("image", "render", "--torch", "2.14", "--neuron-env-source", "pypi",
                 "--format", "json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) == ENVELOPE | {"text", "pins", "notes"}
    assert doc["schema"] == "neuron-env/image-render/v1"
    assert {"release", "torch", "torch_neuronx", "os", "base", "python", "system", "neuron_env",
            "packages", "mirrors"} == set(doc["pins"])  # fmt: skip


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
        "guards", "notes", "remove", "lock",
    }  # fmt: skip
    assert set(plan["packages"][0]) == {
        "name", "spec", "route", "confirmed", "note", "installed", "requested", "extras", "hashes",
    }  # fmt: skip
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


def test_fleet_report_envelope(cli: CliRunner, tmp_path: Path) -> None:
    snapshots = tmp_path / "snapshots"
    snapshots.mkdir()
    made = cli(
        "facts", "-o", str(snapshots / "i-0123.json"), env={"AWS_EC2_METADATA_DISABLED": "true"}
    )
    assert made.returncode == 0
    result = cli("fleet", "report", str(snapshots), "--format", "json")
    doc = json.loads(result.stdout)
    assert doc["schema"] == "neuron-env/fleet-report/v1"
    assert set(doc) == ENVELOPE | {
        "exit_code", "release", "counts", "releases", "groups", "missing", "hosts",
    }  # fmt: skip
    assert set(doc["hosts"][0]) == {
        "name", "hostname", "instance_type", "release", "status", "problems",
    }  # fmt: skip
    assert set(doc["groups"][0]) == {"check", "status", "hosts", "fix", "other_fixes"}
    assert set(doc["hosts"][0]["problems"][0]) == {"check", "status", "summary", "fix"}


EVALUATE_KEYS = {
    "ok", "status", "summary", "details", "entry", "device", "python", "info", "model", "problem",
    "allow_fallback", "compile", "fallback_ops", "recompiles", "advice", "wall_s", "stages",
}  # fmt: skip
EVALUATE_MODEL_KEYS = {
    "name", "model_class", "source", "parameters", "trainable", "dtypes", "inputs", "loss",
    "backward", "training", "reference_s", "warnings",
}  # fmt: skip
EVALUATE_STAGE_KEYS = {
    "name", "kind", "status", "message", "comparisons", "fallback_ops", "fallback_tracked",
    "op_counts", "first_call_s", "steady_s", "repeats", "graphs", "graph_breaks", "error",
    "failed_ops", "isolation_complete", "wall_s",
}  # fmt: skip


def test_evaluate_envelope(cli: CliRunner, neuron_python: Path) -> None:
    from tests.support.cli import DATA

    entry = f"{DATA / 'evaluate' / 'shapes.py'}:make"
    doc = run_json(
        cli, "evaluate", entry, "--python", str(neuron_python), "--format", "json",
        "--shapes", "2x8,4x8",
    )  # fmt: skip
    assert doc["schema"] == "neuron-env/evaluate/v1"
    assert set(doc) == ENVELOPE | EVALUATE_KEYS
    assert set(doc["info"]) == INFO_KEYS
    assert set(doc["model"]) == EVALUATE_MODEL_KEYS
    assert set(doc["model"]["inputs"][0]) == {"name", "shape", "dtype"}
    stages = doc["stages"]
    assert [s["kind"] for s in stages] == ["eager", "compile", "shape", "shape"]
    for stage in stages:
        assert set(stage) == EVALUATE_STAGE_KEYS
        assert set(stage["comparisons"][0]) == COMPARISON_KEYS


def test_evaluate_failure_envelopes(cli: CliRunner, neuron_python: Path, bare_python: Path) -> None:
    from tests.support.cli import DATA

    entry = f"{DATA / 'evaluate' / 'transformer_block.py'}:make"
    env = {"FAKE_NEURON_COMPILE_FAIL_OPS": "gelu"}
    failed = cli("evaluate", entry, "--python", str(neuron_python), "--compile", "--format", "json",
                 env=env)  # fmt: skip
    compiled = json.loads(failed.stdout)["stages"][1]
    assert set(compiled["failed_ops"][0]) == {"op", "error"}
    no_torch = json.loads(
        cli("evaluate", entry, "--python", str(bare_python), "--format", "json").stdout
    )
    assert set(no_torch) == ENVELOPE | EVALUATE_KEYS
    assert set(no_torch["problem"]) == {"kind", "message", "hint"}
