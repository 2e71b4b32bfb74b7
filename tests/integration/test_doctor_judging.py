"""What the doctor judges against, and fixes that work when pasted: saved snapshots as the data."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import DATA, NEURON_ENV, CliRunner

pytestmark = pytest.mark.integration

SNAPSHOTS = DATA / "snapshots"
EVIL = "id>pwned # $USER"
# Commands a fix may run; each stub records its argv (NUL-separated, one line per call).
STUBS = ("sudo", "neuron-env", "id", "apt-get", "modprobe", "rmmod", "python3.12")


def doctor_json(cli: CliRunner, snapshot: Path, *args: str) -> dict[str, object]:
    result = cli("doctor", "--facts", str(snapshot), "--format", "json", *args)
    assert result.returncode in (0, 1), result.stderr
    doc: dict[str, object] = json.loads(result.stdout)
    return doc


def test_torch_2_13_is_judged_against_2_34_which_pairs_it_too(cli: CliRunner) -> None:
    """2.34.0 ships torch-neuronx 2.13.3.1 beside 2.14.3.1: a 2.13 environment is not sent back."""
    result = cli("doctor", "--facts", str(SNAPSHOTS / "torch-2.13-container.json"))
    line = " ".join(result.stdout.split())
    assert "Judged against Neuron 2.34.0" in line and "2.33.1" not in line
    doc = doctor_json(cli, SNAPSHOTS / "torch-2.13-container.json")
    findings = {f["check"]: f for f in doc["findings"]}  # type: ignore[attr-defined]
    assert findings["python.torch"]["status"] == "ok"
    assert "--torch 2.13 --release 2.34.0" in findings["python.torch-neuronx"]["fix"]


def test_torch_2_13_alone_is_judged_against_the_newest_release_pairing_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    """A matrix whose newest release pairs PyTorch 2.14 only sends a 2.13 host to the one before."""
    from neuron_env.resources import shipped_matrix_dir

    text = (shipped_matrix_dir() / "2.34.0.toml").read_text()
    start = text.index('[[pairings]]\ntorch = "2.13.0"')
    (tmp_path / "2.34.0.toml").write_text(
        text[:start] + text[text.index("[[pairings]]", start + 1) :]
    )
    result = cli("--matrix-dir", str(tmp_path), "doctor", "--facts",
                 str(SNAPSHOTS / "torch-2.13-container.json"))  # fmt: skip
    line = " ".join(result.stdout.split())
    assert "Judged against Neuron 2.33.1 (the newest release that pairs the installed torch" in line
    assert "2.34.0 pairs PyTorch 2.14 only" in line


def test_torch_option_picks_the_newest_release_pairing_it(cli: CliRunner) -> None:
    doc = doctor_json(cli, SNAPSHOTS / "torch-2.13-container.json", "--torch", "2.13")
    assert doc["release"] == "2.34.0"


def test_a_release_that_does_not_pair_the_torch_names_what_it_pairs(cli: CliRunner) -> None:
    snapshot = str(SNAPSHOTS / "torch-2.13-container.json")
    result = cli("doctor", "--facts", snapshot, "--release", "2.34.0", "--torch", "2.15")
    assert result.returncode == 2
    assert "pairs torch-neuronx with PyTorch 2.13 and 2.14 only, not 2.15" in result.stderr


def test_a_placeholder_never_names_the_release(cli: CliRunner, tmp_path: Path) -> None:
    doc = json.loads((SNAPSHOTS / "torch-2.13-container.json").read_text())
    dists = doc["facts"]["python"]["distributions"]
    dists["torch"] = {"version": "2.14.0+cpu"}
    dists["torch-neuronx"] = {"version": "1.0", "description": "WRONG PACKAGE. Please install"}
    (tmp_path / "placeholder.json").write_text(json.dumps(doc))
    report = doctor_json(cli, tmp_path / "placeholder.json")
    assert "torch-neuronx 1.0" not in str(report["release_reason"])
    assert report["release"] == "2.34.0"  # the newest release pairing torch 2.14


@pytest.mark.parametrize("version", ["2.9.0.2.15.32035", "99.0"], ids=["legacy-xla", "unknown"])
def test_a_legacy_or_unknown_build_never_names_the_release(
    cli: CliRunner, tmp_path: Path, version: str
) -> None:
    doc = json.loads((SNAPSHOTS / "torch-2.13-container.json").read_text())
    doc["facts"]["python"]["distributions"]["torch-neuronx"] = {"version": version}
    doc["facts"]["system"]["packages"] = {"aws-neuronx-dkms": "2.31.8.0"}
    (tmp_path / "build.json").write_text(json.dumps(doc))
    report = doctor_json(cli, tmp_path / "build.json")
    assert report["release_reason"] == "detected from aws-neuronx-dkms 2.31.8.0"


def test_every_install_fix_names_a_combination_the_release_pairs(
    cli: CliRunner, tmp_path: Path
) -> None:
    """torch 2.13 beside torch-neuronx 2.14, asked about 2.34.0."""
    doc = json.loads((SNAPSHOTS / "torch-2.13-container.json").read_text())
    doc["facts"]["python"]["distributions"]["torch-neuronx"] = {"version": "2.14.3.1.5"}
    (tmp_path / "mixed.json").write_text(json.dumps(doc))
    report = doctor_json(cli, tmp_path / "mixed.json", "--release", "2.34.0")
    installs = [
        shlex.split(f["fix"].split("neuron-env install ", 1)[1])
        for f in report["findings"]  # type: ignore[attr-defined]
        if "neuron-env install " in f["fix"]
    ]
    assert len(installs) >= 2
    for args in installs:
        torch, release = args[args.index("--torch") + 1], args[args.index("--release") + 1]
        resolved = cli("matrix", "resolve", "--torch", torch, "--release", release)
        assert resolved.returncode == 0, (args, resolved.stderr)


def _hostile_snapshot(where: Path) -> Path:
    """Every value a fix embeds (group, kernel, paths, package names) holds shell syntax."""
    doc = json.loads((SNAPSHOTS / "hostile-values.json").read_text())
    prefix = where / f"venv; {EVIL}"
    (prefix / "bin").mkdir(parents=True)
    python = doc["facts"]["python"]
    python["prefix"], python["executable"] = str(prefix), str(prefix / "bin" / "python")
    _stub(prefix / "bin" / "python", where / "calls.log")
    path = where / "hostile.json"
    path.write_text(json.dumps(doc))
    return path


def _stub(path: Path, log: Path) -> None:
    path.write_text(f"#!/bin/sh\nprintf '%s\\0' \"$0\" \"$@\" >> '{log}'\necho >> '{log}'\n")
    path.chmod(0o755)


def test_fixes_built_from_hostile_facts_are_inert(cli: CliRunner, tmp_path: Path) -> None:
    snapshot = _hostile_snapshot(tmp_path)
    doc = doctor_json(cli, snapshot, "--level", "1")
    fixes = [f["fix"] for f in doc["findings"] if f["fix"]]  # type: ignore[attr-defined]
    assert len(fixes) >= 6, fixes
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    for name in STUBS:
        _stub(stubs / name, tmp_path / "calls.log")
    for fix in fixes:
        subprocess.run(
            ["/bin/sh", "-c", fix],
            cwd=tmp_path,
            env={"PATH": str(stubs), "USER": "alice", "HOME": str(tmp_path)},
            capture_output=True,
            timeout=30,
            check=False,
        )
    calls = [c.split("\0")[:-1] for c in (tmp_path / "calls.log").read_text().splitlines() if c]
    assert not list(tmp_path.rglob("pwned")), "a fix ran a redirection from the facts"
    assert not [c for c in calls if os.path.basename(c[0]) == "id"], calls
    assert [str(stubs / "sudo"), "usermod", "-aG", f"neuron; {EVIL}", "alice"] in calls
    assert any(f"linux-headers-6.17.0; {EVIL}" in c for c in calls)
    uninstalls = [c for c in calls if c[1:4] == ["-m", "pip", "uninstall"]]
    assert uninstalls and all(f"nki; {EVIL}" in c or "torch-xla" in c for c in uninstalls)


def test_device_fixes_name_only_flags_the_commands_have(cli: CliRunner, tmp_path: Path) -> None:
    doc = doctor_json(cli, SNAPSHOTS / "hostile-values.json", "--level", "1")
    smoke = next(f for f in doc["findings"] if f["check"] == "device.smoke")  # type: ignore[attr-defined]
    # neuron-env is named by its path where a fresh shell would not find it (this test venv)
    assert (
        smoke["fix"].replace(str(NEURON_ENV), "neuron-env").startswith("neuron-env smoke --device ")
    )
    assert " -v" not in smoke["fix"]  # smoke has no --verbose
    snapshot = json.loads((SNAPSHOTS / "hostile-values.json").read_text())
    snapshot["facts"]["device"]["smoke"]["hint"] = (
        "On a Trn2/Trn3 instance, check the driver and device files: 'neuron-ls', "
        "'lsmod | grep neuron', 'ls -l /dev/neuron*'. Elsewhere use --device cpu."
    )
    (tmp_path / "hint.json").write_text(json.dumps(snapshot))
    doc = doctor_json(cli, tmp_path / "hint.json", "--level", "1")
    smoke = next(f for f in doc["findings"] if f["check"] == "device.smoke")  # type: ignore[attr-defined]
    assert "'lsmod | grep neuron'" in smoke["fix"]
    assert "--device" not in smoke["fix"]  # doctor has no --device


def _variant(where: Path, change: dict[str, object]) -> Path:
    """The torch 2.13 container snapshot with some sections replaced."""
    doc = json.loads((SNAPSHOTS / "torch-2.13-container.json").read_text())
    doc["facts"].update(change)
    path = where / "variant.json"
    path.write_text(json.dumps(doc))
    return path


def test_a_target_outside_a_venv_gets_a_new_venv_made_with_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    python = {"executable": "/usr/bin/python3.12", "version": "3.12.3", "prefix": "/usr"}
    doc = doctor_json(cli, _variant(tmp_path, {"python": python}))
    fixes = {f["check"]: f["fix"].replace(str(NEURON_ENV), "neuron-env") for f in doc["findings"]}  # type: ignore[attr-defined]
    # install refuses --python outside a venv; with a new --venv it creates one with it
    expected = "neuron-env install --torch 2.14 --release 2.34.0 --venv .venv-neuron"
    assert fixes["python.torch"] == f"{expected} --python /usr/bin/python3.12"


def test_no_cache_directories_in_the_facts_is_not_a_pass(cli: CliRunner, tmp_path: Path) -> None:
    doc = doctor_json(cli, _variant(tmp_path, {}), "--check", "env.cache")
    assert doc["findings"][0]["status"] == "skip"  # type: ignore[index]


def test_in_a_container_the_tools_are_reinstalled_on_the_host(
    cli: CliRunner, tmp_path: Path
) -> None:
    nodes = [{"path": f"/dev/neuron{i}", "readable": True, "writable": True} for i in range(16)]
    driver = {"module_loaded": True, "devices": nodes, "neuron_ls_error": "exit status 1"}
    doc = doctor_json(cli, _variant(tmp_path, {"driver": driver}), "--check", "driver.devices")
    finding = doc["findings"][0]  # type: ignore[index]
    assert finding["status"] == "warn"
    assert finding["fix"] == "on the host: sudo apt-get install --reinstall -y aws-neuronx-tools"


def test_skipping_every_check_is_bad_input_not_ready(cli: CliRunner) -> None:
    from neuron_env.checks.registry import CHECKS

    skips = [arg for check in CHECKS for arg in ("--skip", check.id)]
    result = cli("doctor", "--facts", str(SNAPSHOTS / "torch-2.13-container.json"), *skips)
    assert result.returncode == 2
    assert "leave no check to run" in result.stderr
