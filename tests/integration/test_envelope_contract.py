"""Every JSON envelope carries the same common keys, on success, on not-ready and on bad input.

A script that asked for JSON reads ``status``, ``exit_code`` (the process's own) and ``errors``
(``[{message, hint}]``) from stdout whatever happened: a failure is an envelope too, never empty
stdout. The real CLI runs on scenario hosts (a sysroot, a target venv, IMDS on 127.0.0.1).
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner, Result
from tests.support.hosts import Host, scenario_host

pytestmark = pytest.mark.integration

COMMON = {"schema", "neuron_env_version", "command", "status", "exit_code", "errors"}


@dataclass(frozen=True)
class World:
    """What the cases run against: a ready and a broken host, their snapshots, scan inputs."""

    tmp: Path
    ready: Host
    broken: Host
    neuron_python: Path | None = None
    bare_python: Path | None = None

    def snapshots(self, cli: CliRunner, host: Host | None) -> Path:
        folder = self.tmp / f"snapshots-{id(host)}"
        folder.mkdir(exist_ok=True)
        if host is not None:
            made = cli("facts", *host.probe(), "-o", str(folder / "i-0123.json"), env=host.env)
            assert made.returncode == 0, made.stderr
        return folder


@pytest.fixture
def world(tmp_path: Path) -> Iterator[World]:
    ready = scenario_host("healthy-trn2-ubuntu-26.04", tmp_path / "ready")
    broken = scenario_host("driver-not-loaded", tmp_path / "broken")
    yield World(tmp_path, next(ready), next(broken))
    for host in (ready, broken):
        host.close()


def _closed_port_url() -> str:
    with socket.socket() as sock:  # a port nothing listens on: an index that cannot be reached
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/simple"


def _install(w: World, *extra: str) -> list[str]:
    matrices = w.tmp / "matrices"
    matrices.mkdir(exist_ok=True)
    (matrices / "2.90.0.toml").write_text((DATA / "install/matrix/2.90.0.toml").read_text())
    return [
        "--matrix-dir", str(matrices), "install", "--venv", str(w.tmp / "env"), "--python",
        sys.executable, "--os", "ubuntu-26.04", "--log", str(w.tmp / "install.log"), "--json",
        *extra,
    ]  # fmt: skip


def _scan(w: World, source: str) -> str:
    path = w.tmp / "train.py"
    path.write_text(source)
    return str(path)


Run = Callable[[CliRunner, World], Result]
# name: (command, how to run it, the exit code, the status)
CASES: dict[str, tuple[str, Run, int, str]] = {
    # The ready host runs 2.33-era torch-neuronx, whose known issues (fixed in 2.34.0) warn:
    # skipped for the "ok" envelope, kept for the "warn" one.
    "doctor ready": ("doctor", lambda cli, w: cli(
        "doctor", *w.ready.probe(), "--skip", "python.known-issues", "--format", "json",
        env=w.ready.env), 0, "ok"),
    "doctor ready, with warnings": ("doctor", lambda cli, w: cli(
        "doctor", *w.ready.probe(), "--format", "json", env=w.ready.env), 0, "warn"),
    "doctor not ready": ("doctor", lambda cli, w: cli(
        "doctor", *w.broken.probe(), "--format", "json", env=w.broken.env), 1, "fail"),
    "doctor unknown release": ("doctor", lambda cli, w: cli(
        "doctor", *w.ready.probe(), "--release", "9.9.9", "--format", "json", env=w.ready.env),
        2, "error"),
    "doctor level out of range": ("doctor", lambda cli, w: cli(
        "doctor", "--format", "json", "--level", "5"), 2, "error"),
    "facts": ("facts", lambda cli, w: cli("facts", *w.ready.probe(), env=w.ready.env), 0, "ok"),
    "facts bad timeout": ("facts", lambda cli, w: cli("facts", "--probe-timeout", "0"), 2,
                          "error"),
    "facts missing python": ("facts", lambda cli, w: cli(
        "facts", "--python", str(w.tmp / "missing" / "python")), 2, "error"),
    "install dry run": ("install", lambda cli, w: cli(
        *_install(w, "--torch", "2.14", "--dry-run")), 0, "ok"),
    "install unreachable index": ("install", lambda cli, w: cli(
        *_install(w, "--torch", "2.14", "--yes", "--neuron-index", (down := _closed_port_url()),
                  "--pytorch-index", down, "--index-url", down),
        env={"UV_HTTP_RETRIES": "0", "PIP_RETRIES": "0"}), 1, "error"),
    "install unsupported torch": ("install", lambda cli, w: cli(
        *_install(w, "--torch", "9.9", "--dry-run")), 2, "error"),
    "install bad backend with --format json": ("install", lambda cli, w: cli(
        "install", "--torch", "2.14", "--format", "json", "--backend", "conda"), 2, "error"),
    "matrix resolve": ("matrix resolve", lambda cli, w: cli(
        "matrix", "resolve", "--torch", "2.14", "--json"), 0, "ok"),
    "matrix resolve unsupported": ("matrix resolve", lambda cli, w: cli(
        "matrix", "resolve", "--torch", "9.9", "--format", "json"), 2, "error"),
    "scan clean": ("scan", lambda cli, w: cli(
        "scan", _scan(w, "import torch\n"), "--format", "json"), 0, "ok"),
    "scan findings": ("scan", lambda cli, w: cli(
        "scan", str(DATA / "scan/corpus/xla_aliases.py"), "--format", "json"), 1, "fail"),
    "scan bad --fail-on": ("scan", lambda cli, w: cli(
        "scan", _scan(w, "x = 1\n"), "--fail-on", "bogus", "--format", "json"), 2, "error"),
    "fleet report ready": ("fleet report", lambda cli, w: cli(
        "fleet", "report", str(w.snapshots(cli, w.ready)), "--format", "json",
        env=w.ready.env), 0, "ok"),
    "fleet report not ready": ("fleet report", lambda cli, w: cli(
        "fleet", "report", str(w.snapshots(cli, w.broken)), "--format", "json",
        env=w.broken.env), 1, "fail"),
    "fleet report empty folder": ("fleet report", lambda cli, w: cli(
        "fleet", "report", str(w.snapshots(cli, None)), "--format", "json"), 2, "error"),
    "preflight ready": ("preflight", lambda cli, w: cli(
        "preflight", "--level", "0", *w.ready.probe(), "--allow", "python.known-issues",
        "--format", "json", env=w.ready.env), 0, "ok"),
    "preflight not ready": ("preflight", lambda cli, w: cli(
        "preflight", "--level", "0", *w.broken.probe(), "--format", "json", env=w.broken.env),
        1, "fail"),
    "preflight unknown --allow": ("preflight", lambda cli, w: cli(
        "preflight", "--level", "0", "--allow", "no.such-check", "--format", "json",
        *w.ready.probe(), env=w.ready.env), 2, "error"),
    "selftest bad timeout": ("selftest", lambda cli, w: cli(
        "selftest", "--format", "json", "--timeout", "0"), 2, "error"),
}  # fmt: skip


def check_envelope(result: Result, command: str, exit_code: int, status: str) -> None:
    assert result.returncode == exit_code, result.stderr
    doc = json.loads(result.stdout)
    assert set(doc) >= COMMON
    assert doc["schema"].startswith("neuron-env/") and doc["schema"].endswith("/v1")
    assert (doc["command"], doc["status"], doc["exit_code"]) == (command, status, exit_code)
    for error in doc["errors"]:
        assert set(error) == {"message", "hint"} and error["message"]
    if exit_code == 2:  # bad input: said on stderr as before, and in the envelope
        assert doc["errors"], doc
        assert "error" in result.stderr.lower()
    if status in ("ok", "fail"):
        assert doc["errors"] == []


@pytest.mark.parametrize("case", list(CASES))
def test_every_envelope_has_the_common_keys(cli: CliRunner, world: World, case: str) -> None:
    command, run, exit_code, status = CASES[case]
    check_envelope(run(cli, world), command, exit_code, status)


def test_selftest_envelopes(cli: CliRunner, neuron_python: Path, bare_python: Path) -> None:
    """A run that passed, and one that could not start (its problem is the envelope's error)."""
    passed = cli("selftest", "--python", str(neuron_python), "--only", "softmax/fp32/eager",
                 "--format", "json")  # fmt: skip
    check_envelope(passed, "selftest", 0, "ok")
    no_torch = cli("selftest", "--python", str(bare_python), "--format", "json")
    check_envelope(no_torch, "selftest", 1, "error")
    assert json.loads(no_torch.stdout)["errors"][0]["message"]


def test_an_error_after_the_document_adds_no_second_one(cli: CliRunner, tmp_path: Path) -> None:
    """stdout holds exactly one JSON document, even when the envelope was already written."""
    result = cli("matrix", "resolve", "--torch", "2.14", "--json", "--format", "json")
    assert result.returncode == 0
    json.loads(result.stdout)  # one document, parseable as a whole


def test_text_mode_failures_print_nothing_on_stdout(cli: CliRunner) -> None:
    """Not asked for JSON: errors stay on stderr alone, as before."""
    result = cli("matrix", "resolve", "--torch", "9.9")
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
