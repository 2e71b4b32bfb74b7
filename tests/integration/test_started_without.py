"""A process started without what Python assumes: a working directory that was removed after the
shell entered it, a closed stdout (``>&-``) or stderr. Each ended with a Python traceback and
exit 1 (what CI reads as "not ready"); now each is said in one ``error:`` line with exit 2, or,
where nothing needed it, the run goes on as usual.

The console script starts itself here (``preexec_fn``): the state is the new process's own.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.cli import CliRunner, cli_runner

pytestmark = pytest.mark.integration

GONE = "The current folder no longer exists: it was removed (or moved) after this shell entered it."


def _remove_the_working_directory() -> None:
    os.rmdir(os.getcwd())  # runs in the child, after its chdir: the shell's folder is gone


def _close_stdout() -> None:
    os.close(1)


def _close_stderr() -> None:
    os.close(2)


@pytest.mark.parametrize(
    "args",
    [("doctor",), ("doctor", "--format", "json"), ("scan", "."),
     ("install", "--torch", "2.14", "--dry-run")],
    ids=["doctor", "doctor-json", "scan", "install"],
)  # fmt: skip
def test_a_removed_working_directory_is_named_with_exit_2(
    tmp_path: Path, args: tuple[str, ...]
) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()

    result = cli_runner(gone)(*args, preexec_fn=_remove_the_working_directory)

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert " ".join(result.stderr.split()).startswith(f"error: {GONE}")
    assert "cd to a folder that exists" in result.stderr
    if "json" in args:
        doc = json.loads(result.stdout)
        assert doc["status"] == "error" and doc["errors"][0]["message"] == GONE


def test_a_command_that_needs_no_folder_runs_in_a_removed_one(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()

    result = cli_runner(gone)("matrix", "list", preexec_fn=_remove_the_working_directory)

    assert result.returncode == 0, result.stderr
    assert "Neuron releases" in result.stdout


def test_a_closed_stdout_is_bad_input_said_on_stderr(cli: CliRunner) -> None:
    result = cli("doctor", preexec_fn=_close_stdout)

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())
    assert said.startswith("error: Standard output is closed (e.g. '>&-'): the report has nowhere")
    assert "-o FILE" in said


def test_with_a_closed_stdout_a_report_to_a_file_is_written(tmp_path: Path) -> None:
    report = tmp_path / "doctor.json"
    verdict = cli_runner(tmp_path)("doctor", "--format", "json")

    result = cli_runner(tmp_path)("doctor", "--format", "json", "-o", str(report),
                                  preexec_fn=_close_stdout)  # fmt: skip

    assert result.returncode == verdict.returncode, result.stderr
    assert json.loads(report.read_text())["exit_code"] == verdict.returncode


def test_a_closed_stderr_keeps_the_exit_code(cli: CliRunner) -> None:
    """Nothing can be said, but the exit code still says it: bad input stays 2, the report 1."""
    bad = cli("doctor", "--release", "9.9", preexec_fn=_close_stderr)
    report = cli("doctor", "--format", "json", preexec_fn=_close_stderr)

    assert bad.returncode == 2
    assert report.returncode == json.loads(report.stdout)["exit_code"]


def _stdout_to_a_full_disk() -> None:
    full = os.open("/dev/full", os.O_WRONLY)  # every write: ENOSPC, as on a full disk
    os.dup2(full, 1)
    os.close(full)


@pytest.mark.parametrize("buffered", [True, False], ids=["buffered", "unbuffered"])
@pytest.mark.parametrize(
    "args",
    [("doctor",), ("doctor", "--format", "json"), ("facts",), ("matrix", "list")],
    ids=["doctor", "doctor-json", "facts", "matrix-list"],
)
def test_a_report_stdout_refuses_is_said_with_exit_2(
    tmp_path: Path, args: tuple[str, ...], buffered: bool
) -> None:
    """``neuron-env doctor > report.txt`` on a full disk: the report was lost with no word (the
    interpreter's last flush failed after the verdict's exit code, 0 or 1, was set) or with a
    traceback (an unbuffered stdout, rich's tables)."""
    env = {"PYTHONUNBUFFERED": "" if buffered else "1"}
    result = cli_runner(tmp_path)(*args, env=env, preexec_fn=_stdout_to_a_full_disk)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr
    said = " ".join(result.stderr.split())
    assert said.startswith("error: Standard output refused the report: No space left on device"), (
        said
    )
    assert "write the report elsewhere with -o FILE" in said
