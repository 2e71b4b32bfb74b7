"""Forged or chatty workers: whatever the target interpreter prints, a deadline holds, a pass needs
every requested result, and an interrupt leaves nothing running.

The target ``--python`` is a script (``forged_worker.py``) that speaks the worker protocol badly on
purpose; neuron-env is the real console script, and the signals are real signals.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import CliRunner, cli_argv

pytestmark = pytest.mark.integration

FORGED = Path(__file__).with_name("forged_worker.py")


@pytest.fixture
def forged(tmp_path: Path) -> Path:
    """An executable that neuron-env takes for the target interpreter."""
    python = tmp_path / "forged-python"
    python.write_text(f"#!/bin/sh\nexec {sys.executable} {FORGED}\n")
    python.chmod(0o755)
    return python


@pytest.fixture
def model(tmp_path: Path) -> Path:
    path = tmp_path / "model.py"
    path.write_text("def make():\n    raise AssertionError('never called by a forged worker')\n")
    return path


def run(cli: CliRunner, mode: str, *args: str, timeout: float = 60):  # type: ignore[no-untyped-def]
    start = time.monotonic()
    result = cli(*args, env={"FORGED_WORKER": mode}, timeout=timeout)
    return result, time.monotonic() - start


# --- the deadline is per case, whatever the worker prints -------------------------------------


def test_a_hung_case_that_prints_garbage_still_times_out_at_its_deadline(
    cli: CliRunner, forged: Path
) -> None:
    result, took = run(cli, "chatty-hang", "smoke", "--python", str(forged), "--timeout", "3",
                       "--format", "json")  # fmt: skip
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert doc["cases"][0]["status"] == "timeout"
    assert "did not finish within 3 s" in doc["cases"][0]["message"]
    assert doc["cases"][1]["status"] == "skipped"  # the device is suspect: not tried again
    assert took < 6, f"smoke --timeout 3 took {took:.1f} s"


def test_a_worker_that_prints_garbage_instead_of_starting_times_out(
    cli: CliRunner, forged: Path
) -> None:
    result, took = run(cli, "chatty-import", "smoke", "--python", str(forged), "--timeout", "3",
                       "--format", "json")  # fmt: skip
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["problem"]["kind"] == "worker-timeout"
    assert "did not start within 3 s" in doc["problem"]["message"]
    assert took < 8


def test_an_evaluate_stage_that_prints_garbage_times_out(
    cli: CliRunner, forged: Path, model: Path
) -> None:
    result, took = run(cli, "chatty-hang", "evaluate", f"{model}:make", "--python", str(forged),
                       "--timeout", "3", "--format", "json")  # fmt: skip
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["problem"]["kind"] == "entry-timeout"
    assert took < 8


# --- a pass needs every requested result ------------------------------------------------------


def test_done_without_results_is_no_pass(cli: CliRunner, forged: Path) -> None:
    result, _ = run(cli, "done-early", "smoke", "--python", str(forged), "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert doc["problem"]["kind"] == "worker-protocol"
    assert "without a result for smoke/fp32/eager, smoke/bf16/eager" in doc["problem"]["message"]


def test_done_without_results_never_reads_as_passed(cli: CliRunner, forged: Path) -> None:
    result, _ = run(cli, "done-early", "smoke", "--python", str(forged))
    assert result.returncode == 1
    assert "passed" not in result.stdout
    assert "✗" in result.stdout and "without a result" in result.stdout


def test_a_selftest_worker_done_early_fails(cli: CliRunner, forged: Path) -> None:
    result, _ = run(cli, "done-early", "selftest", "--python", str(forged), "--only", "matmul",
                    "--format", "json")  # fmt: skip
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["problem"]["kind"] == "worker-protocol"


def test_an_evaluate_worker_done_early_fails(cli: CliRunner, forged: Path, model: Path) -> None:
    result, _ = run(cli, "done-early", "evaluate", f"{model}:make", "--python", str(forged))
    assert result.returncode == 1
    assert "passed" not in result.stdout
    assert "without a result for" in result.stdout and "eager" in result.stdout


def test_an_evaluate_worker_that_leaves_out_the_requested_shapes_fails(
    cli: CliRunner, forged: Path, model: Path
) -> None:
    result, _ = run(cli, "stages-only", "evaluate", f"{model}:make", "--python", str(forged),
                    "--shapes", "2x8,4x8", "--format", "json")  # fmt: skip
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["problem"]["kind"] == "worker-protocol"
    assert "without a result for shape 2x8, shape 4x8" in doc["problem"]["message"]


def test_a_worker_that_quits_without_results_fails(cli: CliRunner, forged: Path) -> None:
    result, _ = run(cli, "quit", "smoke", "--python", str(forged), "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False
    assert doc["cases"][0]["status"] == "error"
    assert "exited with code 0 during this case" in doc["cases"][0]["message"]


def test_an_evaluate_worker_that_quits_before_any_stage_fails(
    cli: CliRunner, forged: Path, model: Path
) -> None:
    result, _ = run(cli, "quit", "evaluate", f"{model}:make", "--python", str(forged))
    assert result.returncode == 1
    assert "passed" not in result.stdout
    assert "exited with code 0 before reporting load, eager" in result.stdout


def test_a_worker_killed_by_a_signal_is_named_by_it_and_stops_the_rest(
    cli: CliRunner, forged: Path
) -> None:
    result, _ = run(cli, "abort", "smoke", "--python", str(forged), "--format", "json")
    assert result.returncode == 1
    crashed, left_out = json.loads(result.stdout)["cases"]
    assert crashed["status"] == "error"
    assert crashed["message"].endswith("during this case (killed by SIGABRT)")
    assert "all is well" not in crashed["message"]  # stderr chatter is not the cause
    assert left_out["status"] == "skipped"
    assert left_out["message"].startswith("not run: the worker died in smoke/fp32/eager")


def _largest_open_file(pid: int) -> int:
    """The size of the largest regular file ``pid`` holds open for writing (a deleted temp file
    included). Files open only for reading are left out: the dynamic loader holds libc.so.6
    (1.9 MB) open for a moment while the process starts, which a loaded machine lets a sample
    catch (CI, the fourth session of 7 December)."""
    sizes = [0]
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError, ValueError):
                info = fd.stat()
                if stat.S_ISREG(info.st_mode) and _open_for_writing(pid, fd.name):
                    sizes.append(info.st_size)
    return max(sizes)


def _open_for_writing(pid: int, fd: str) -> bool:
    """Whether descriptor ``fd`` of ``pid`` was opened to write (its ``fdinfo`` flags, octal)."""
    for line in Path(f"/proc/{pid}/fdinfo/{fd}").read_text().splitlines():
        if line.startswith("flags:"):
            return int(line.split()[1], 8) & os.O_ACCMODE != os.O_RDONLY
    return True  # no flags line: counted, as before


def test_a_flood_on_stderr_fills_neither_memory_nor_disk(forged: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    env.update(FORGED_WORKER="stderr-flood", NO_COLOR="1")
    argv = cli_argv("smoke", "--python", str(forged), "--timeout", "3", "--format", "json")
    largest = 0
    # The with-block closes the pipe (an unclosed one is a ResourceWarning, an error here).
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                          text=True) as proc:  # fmt: skip
        try:
            while proc.poll() is None:
                largest = max(largest, _largest_open_file(proc.pid))
                time.sleep(0.1)
            out = proc.stdout.read() if proc.stdout else ""
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 1
    assert json.loads(out)["cases"][0]["status"] == "timeout"
    assert largest < 1 << 20, f"neuron-env kept {largest >> 20} MiB of the worker's stderr"


def test_a_flood_without_newlines_is_a_protocol_error(cli: CliRunner, forged: Path) -> None:
    result, took = run(cli, "flood", "smoke", "--python", str(forged), "--format", "json")
    assert result.returncode == 1
    doc = json.loads(result.stdout)
    assert doc["ok"] is False and doc["problem"]["kind"] == "worker-protocol"
    assert "a line longer than 1 MiB" in doc["problem"]["message"]
    assert took < 30


# --- an interrupt stops the worker's whole process group, then exits 130 or 143 -------------------


def _command(name: str, forged: Path, model: Path) -> list[str]:
    if name == "evaluate":
        return ["evaluate", f"{model}:make", "--python", str(forged)]
    if name in ("doctor", "preflight"):  # the device levels run in a thread there
        return [name, "--level", "1", "--python", str(forged), "--probe-timeout", "2"]
    return [name, "--python", str(forged)] + (["--only", "matmul"] if name == "selftest" else [])


def _wait_for(path: Path, proc: subprocess.Popen[str], seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the forged worker never reported being hung"
        time.sleep(0.05)
    return path.read_text()


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _group_members(pgid: int) -> list[int]:
    members = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                members.append(int(entry.name))
    return members


def _left_running(worker: int, grandchild: int) -> tuple[list[int], list[int]]:
    """The worker and its child, and the members of the worker's process group, still running
    once neuron-env has exited: each has had up to 5 s to finish dying. neuron-env sends SIGKILL
    to the group and reaps the worker; the worker's child, reparented, ends on its own once the
    kernel runs it (on a loaded machine, a few milliseconds after neuron-env exits: CI, fifth
    session of 7 December, saw it still running then, and gone when the group was listed)."""
    deadline = time.monotonic() + 5
    while True:
        survivors = [pid for pid in (worker, grandchild) if _alive(pid)]
        group = _group_members(worker)
        if not (survivors or group) or time.monotonic() > deadline:
            return survivors, group
        time.sleep(0.02)


@pytest.mark.parametrize("command", ["smoke", "selftest", "evaluate", "doctor", "preflight"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_kills_the_hung_worker_and_exits_128_plus_the_signal(
    command: str, signum: signal.Signals, forged: Path, model: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    env.update(FORGED_WORKER="hang", FORGED_PIDS=str(pids), NO_COLOR="1",
               AWS_EC2_METADATA_DISABLED="true")  # fmt: skip
    proc = subprocess.Popen(cli_argv(*_command(command, forged, model)), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    worker = grandchild = 0
    try:
        worker, grandchild = (int(p) for p in _wait_for(pids, proc, 30).split())
        proc.send_signal(signum)
        _, stderr = proc.communicate(timeout=20)
        survivors, group = _left_running(worker, grandchild)
    finally:
        if proc.poll() is None:
            proc.kill()
        if worker:  # never leave a forged worker behind, whatever the outcome
            with contextlib.suppress(ProcessLookupError):
                os.killpg(worker, signal.SIGKILL)
    assert proc.returncode == 128 + signum, stderr
    assert "Interrupted." in stderr
    assert "Traceback" not in stderr
    assert survivors == [] and group == []


# --- a timeout must be a finite, positive number of seconds -----------------------------------


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
@pytest.mark.parametrize(
    "command",
    [
        ["smoke", "--timeout"],
        ["selftest", "--timeout"],
        ["evaluate", "model.py:make", "--timeout"],
        ["doctor", "--probe-timeout"],
        ["preflight", "--probe-timeout"],
    ],
    ids=["smoke", "selftest", "evaluate", "doctor", "preflight"],
)
def test_a_timeout_that_is_not_a_positive_number_is_bad_input(
    cli: CliRunner, command: list[str], value: str, tmp_path: Path
) -> None:
    (tmp_path / "model.py").write_text("def make():\n    pass\n")
    result = cli(*command, value)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: "), result.stderr
    assert command[-1] in result.stderr and value in result.stderr
    assert "Traceback" not in result.stderr
