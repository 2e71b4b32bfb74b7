"""The suite's fork server (``tests/support/forkserver.py``) starts the console script's ``main()``
in a fork of a warm interpreter: whatever a test sees of a run must be what the console script
started by ``exec`` shows, or the ~1,300 runs that use it would test something users never run."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import DATA, FORKSERVER, Result, cli_runner, machine_env

pytestmark = pytest.mark.integration

SNAPSHOT = DATA / "snapshots" / "torch-2.13-container.json"


def both(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> tuple[Result, Result]:
    """The same run through the fork server and through the console script itself."""
    cli = cli_runner(tmp_path)
    forked = cli(*args, env=env)
    cli_exec = cli_runner(tmp_path, prefix=["env"])  # a prefix: the console script is exec'd
    return forked, cli_exec(*args, env=env)


@pytest.mark.parametrize(
    "args",
    [
        ("--version",),
        ("doctor", "--facts", str(SNAPSHOT)),
        ("doctor", "--facts", str(SNAPSHOT), "--format", "json", "--redact"),
        ("doctor", "--levle", "1"),  # click's usage error, exit 2
        ("doctor", "--facts", "missing.json", "--format", "json"),  # our error envelope, exit 2
        ("matrix", "show", "--release", "2.34.0"),
        ("scan", "--format", "json"),  # the working directory: an empty folder
        ("install", "--help"),
    ],
)
def test_a_forked_run_prints_and_exits_as_the_console_script(
    tmp_path: Path, args: tuple[str]
) -> None:
    forked, executed = both(tmp_path, *args)
    assert forked == executed


def test_the_run_gets_the_environment_and_working_directory_it_is_given(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch_xla.core.xla_model as xm\n")
    forked, executed = both(tmp_path, "scan", env={"COLUMNS": "61"})
    assert forked == executed and "train.py" in forked.stdout
    env = {"NEURON_ENV_MATRIX_DIR": str(tmp_path / "no-such-folder")}
    forked, executed = both(tmp_path, "matrix", "show", env=env)
    assert forked == executed and forked.returncode == 2 and "no-such-folder" in forked.stderr


def test_a_variable_the_interpreter_reads_at_start_gets_a_new_interpreter(tmp_path: Path) -> None:
    assert FORKSERVER.for_env(machine_env()) is FORKSERVER
    assert FORKSERVER.for_env({**machine_env(), "PYTHONPATH": str(tmp_path)}) is None
    assert FORKSERVER.for_env({**machine_env(), "LC_ALL": "C"}) is None
    # ...and such a run does see it: a module on that path shadows nothing of ours, but runs.
    (tmp_path / "sitecustomize.py").write_text("import sys; print('SITE', file=sys.stderr)\n")
    result = cli_runner(tmp_path)("--version", env={"PYTHONPATH": str(tmp_path)})
    assert result.returncode == 0 and "SITE" in result.stderr


def test_a_run_past_its_timeout_is_killed_like_subprocess_run(tmp_path: Path) -> None:
    hang = tmp_path / "python"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    cli = cli_runner(tmp_path, timeout=2)
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        cli("doctor", "--python", str(hang), "--probe-timeout", "300")
    assert time.monotonic() - started < 30


def test_sigterm_unwinds_the_run_as_it_does_the_console_script(tmp_path: Path) -> None:
    kill = tmp_path / "python"
    kill.write_text("#!/bin/sh\nkill -TERM $PPID\nexec sleep 1 >/dev/null 2>&1\n")
    kill.chmod(0o755)
    forked, executed = both(tmp_path, "doctor", "--python", str(kill))
    # neuron-env unwinds SIGTERM itself: exit 143, one line, nothing left running
    assert forked.returncode == executed.returncode == 143
    assert forked.stderr == executed.stderr


def test_the_run_is_a_process_of_its_own_that_ends_with_the_run(tmp_path: Path) -> None:
    probe = tmp_path / "python"  # the target "interpreter" writes down its parent: neuron-env
    probe.write_text(f"#!/bin/sh\necho $PPID > {tmp_path}/parent\nexit 1\n")
    probe.chmod(0o755)
    cli_runner(tmp_path)("doctor", "--python", str(probe))
    parent = int((tmp_path / "parent").read_text())
    assert parent not in (os.getpid(), os.getppid())
    with pytest.raises(ProcessLookupError):
        os.kill(parent, 0)  # reaped by the server: no zombie, no process left
