"""``doctor --python`` naming an interpreter older than the target probe runs on: a system
``python`` of 2.7 (CentOS 7, old images), a 3.6 (Ubuntu 18.04). The probe cannot run there, and
doctor said "Could not probe python: ... failed with exit code 1" on eight checks with "Run again
with --debug; if it persists, report it". Now platform.python fails with the version and the
install command, and the python.* checks say they were not judged.

The interpreters are stand-ins copying what pyenv's 2.7.18 and 3.6.15 print
(``tests/fakes/old_python``): the suite's machines need not have them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import REPO, CliRunner
from tests.support.hosts import Host, scenario_host

pytestmark = pytest.mark.integration

OLD = REPO / "tests" / "fakes" / "old_python"


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("healthy-trn2-ubuntu-26.04", tmp_path)


def doctor(cli: CliRunner, host: Host, python: Path, code: int) -> dict[str, dict[str, str]]:
    args = ["--matrix-dir", str(host.matrix), "doctor", "--sysroot", str(host.sysroot),
            "--python", str(python), "--format", "json"]  # fmt: skip
    result = cli(*args, env=host.env)
    assert result.returncode == code, result.stdout + result.stderr
    return {f["check"]: f for f in json.loads(result.stdout)["findings"]}


@pytest.mark.parametrize(("name", "version"), [("python3.6", "3.6.15"), ("python2.7", "2.7.18")])
def test_an_interpreter_too_old_for_the_probe_fails_platform_python_with_the_install_fix(
    cli: CliRunner, host: Host, name: str, version: str
) -> None:
    findings = doctor(cli, host, OLD / name, 1)  # failed: Python too old

    python = findings["platform.python"]
    assert python["status"] == "fail"
    assert python["summary"].startswith(f"Python {version} is not supported by TorchNeuron")
    assert " install --torch 2.14 " in python["fix"]
    package_checks = [f for check, f in findings.items() if check.startswith("python.")]
    assert len(package_checks) == 8
    for finding in package_checks:
        assert finding["status"] == "skip", finding
        assert finding["summary"] == (f"Not judged: neuron-env cannot read the packages of "
                                      f"Python {version} (see platform.python)")  # fmt: skip
    assert not any("Could not probe" in f["summary"] for f in findings.values())


def test_the_snapshot_of_such_a_host_is_judged_the_same_elsewhere(
    cli: CliRunner, host: Host, tmp_path: Path
) -> None:
    snapshot = tmp_path / "facts.json"
    args = ["--matrix-dir", str(host.matrix), "facts", "--sysroot", str(host.sysroot),
            "--python", str(OLD / "python3.6"), "-o", str(snapshot)]  # fmt: skip
    assert cli(*args, env=host.env).returncode == 0
    assert json.loads(snapshot.read_text())["facts"]["python"]["readable"] is False

    judged = cli("--matrix-dir", str(host.matrix), "doctor", "--facts", str(snapshot),
                 "--format", "json", env=host.env)  # fmt: skip

    findings = {f["check"]: f["status"] for f in json.loads(judged.stdout)["findings"]}
    assert findings["platform.python"] == "fail" and findings["python.torch"] == "skip"


def test_a_supported_interpreter_whose_probe_fails_is_still_an_error_naming_the_failure(
    cli: CliRunner, host: Host
) -> None:
    findings = doctor(cli, host, OLD / "python3.12-broken", 3)  # could not judge, not "failed"

    python = findings["platform.python"]
    assert python["status"] == "error"
    assert python["summary"].startswith("Could not probe python:")
    assert "failed with exit code 1" in python["summary"]


def test_a_program_that_is_no_python_is_named_with_what_to_point_at(
    cli: CliRunner, host: Host
) -> None:
    """``--python /bin/sh``: the probe and the version query both fail; the fix says what
    --python wants instead of "Run again with --debug; if it persists, report it"."""
    findings = doctor(cli, host, Path("/bin/sh"), 3)

    python = findings["platform.python"]
    assert python["status"] == "error"
    assert python["summary"].startswith(
        "Could not probe python: /bin/sh does not answer as a Python interpreter ("
    )
    assert python["fix"] == "Point --python at a Python interpreter (an environment's bin/python)."


def test_a_python_that_is_not_executable_is_bad_input(cli: CliRunner, tmp_path: Path) -> None:
    python = tmp_path / "python"
    python.write_text("#!/bin/sh\n")  # execute bit not set (a copied file, a mounted share)

    result = cli("doctor", "--python", str(python))

    assert result.returncode == 2, result.stdout
    said = " ".join(result.stderr.split())
    assert said.startswith(f"error: {python} is not executable by this user: --python names")


def test_an_empty_python_is_the_working_directory_and_bad_input(
    cli: CliRunner, tmp_path: Path
) -> None:
    """``--python ''`` (an unset variable in a script: ``--python "$PY"``) is the working
    directory; it was probed as an interpreter ("cannot run .") on eight checks."""
    result = cli("doctor", "--python", "")

    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith("error: --python . is a folder; it names an interpreter.")
    assert "give --venv ., or --python bin/python." in result.stderr


@pytest.mark.parametrize(
    ("args", "worker"),
    [(("smoke",), "self-test worker"), (("selftest",), "self-test worker"),
     (("evaluate", "model.py:make"), "evaluate worker")],
    ids=["smoke", "selftest", "evaluate"],
)  # fmt: skip
def test_a_device_command_on_python_2_says_it_is_too_old(
    cli: CliRunner, tmp_path: Path, args: tuple[str, ...], worker: str
) -> None:
    """The worker's start failed with "exited with code 2 ... before reporting: Unknown option:
    -I" and the advice to check that the interpreter runs."""
    (tmp_path / "model.py").write_text("def make():\n    raise SystemExit\n")
    python = OLD / "python2.7"

    result = cli(*args, "--python", str(python), "--format", "json")

    doc = json.loads(result.stdout)
    assert result.returncode == 1, result.stderr
    problem = doc["problem"]
    assert problem["message"] == (f"{python} is Python 2.7.18: the {worker} runs on Python 3.8 "
                                  "or later (TorchNeuron needs 3.12 or later).")  # fmt: skip
    assert problem["hint"].startswith("Point --python at the interpreter of a TorchNeuron")


def test_collectives_on_python_2_is_bad_input_saying_it_is_too_old(cli: CliRunner) -> None:
    python = OLD / "python2.7"

    result = cli("collectives", "--backend", "gloo", "--nproc-per-node", "2",
                 "--python", str(python))  # fmt: skip

    assert result.returncode == 2, result.stdout
    said = " ".join(result.stderr.split())
    assert said.startswith(f"error: {python} is Python 2.7.18: the ranks of collectives run on")


def test_a_snapshot_that_says_a_supported_python_was_unread_judges_nothing_as_passed(
    cli: CliRunner, host: Host, tmp_path: Path
) -> None:
    """``"readable": false`` is the probe's word for a Python older than 3.8 only; a snapshot
    saying it of another (edited, or forged) makes the package checks errors, never skips a
    gate could read as nothing wrong."""
    made = cli("--matrix-dir", str(host.matrix), "facts", *host.probe(), env=host.env)
    doc = json.loads(made.stdout)
    doc["facts"]["python"]["readable"] = False
    snapshot = tmp_path / "edited.json"
    snapshot.write_text(json.dumps(doc))

    judged = cli("--matrix-dir", str(host.matrix), "doctor", "--facts", str(snapshot),
                 "--format", "json")  # fmt: skip

    assert judged.returncode == 3, judged.stdout  # could not judge: not ready, not failed
    findings = {f["check"]: f for f in json.loads(judged.stdout)["findings"]}
    torch = findings["python.torch"]
    assert torch["status"] == "error"
    assert torch["summary"].startswith("Could not probe python: the snapshot records no packages")
