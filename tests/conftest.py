"""Fixtures shared by unit and integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data"
# The console script installed next to the interpreter running the tests.
NEURON_ENV = Path(sys.executable).with_name("neuron-env")

# The Ctrl-C tests press Ctrl-C as at a terminal, where SIGINT is not ignored. A suite started in
# the background of a script ('bash .ci/run &', nohup) inherits SIGINT ignored and would hand that
# on to every neuron-env it starts, which then rightly ignores Ctrl-C as a background job should.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


CliRunner = Callable[..., Result]


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """Run the real ``neuron-env`` console script in a subprocess, as a user would."""
    return cli_runner(tmp_path)


def cli_runner(cwd: Path) -> CliRunner:
    """A runner of the console script from ``cwd`` (for fixtures wider than one test)."""

    def run(*args: str, env: dict[str, str | None] | None = None, timeout: float = 60) -> Result:
        """``env`` is added to this machine's environment; a variable set to None is removed."""
        full_env: dict[str, str | None] = {
            k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")
        }
        full_env.update({"NO_COLOR": "1", "COLUMNS": "160", **(env or {})})
        proc = subprocess.run(
            [str(NEURON_ENV), *args],
            capture_output=True,
            text=True,
            env={k: v for k, v in full_env.items() if v is not None},
            cwd=cwd,
            timeout=timeout,
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run
