"""Running the real ``neuron-env`` console script from the tests, and where the tests' data lives.

The one home of these helpers (tests/conftest.py only turns them into fixtures)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
# The console script installed next to the interpreter running the tests.
NEURON_ENV = Path(sys.executable).with_name("neuron-env")


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


CliRunner = Callable[..., Result]


def cli_argv(*args: str) -> list[str]:
    """The console script's command line, for the few tests that start it themselves (on a
    terminal, to signal it while it runs, under ``unshare``); every other test uses
    :func:`cli_runner`."""
    return [str(NEURON_ENV), *args]


def machine_env(*dropped: str) -> dict[str, str]:
    """This machine's environment without neuron-env's own variables (and those starting with
    ``dropped``), with plain output 160 columns wide."""
    prefixes = ("NEURON_ENV_", *dropped)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return {**env, "NO_COLOR": "1", "COLUMNS": "160"}


def cli_runner(
    cwd: Path | None = None,
    *,
    base_env: Mapping[str, str] | None = None,
    timeout: float = 60,
    prefix: Sequence[str] = (),
) -> CliRunner:
    """The one way the tests run the console script to its end: from ``cwd``, with ``base_env``
    (default :func:`machine_env`), behind ``prefix`` (e.g. a command that drops capabilities)."""
    base = dict(machine_env() if base_env is None else base_env)

    def run(
        *args: str,
        env: Mapping[str, str | None] | None = None,
        timeout: float = timeout,
        preexec_fn: Callable[[], None] | None = None,
    ) -> Result:
        """``env`` is added to the base environment; a variable set to None is removed."""
        full_env: dict[str, str | None] = {**base, **(env or {})}
        proc = subprocess.run(
            [*prefix, *cli_argv(*args)],
            capture_output=True,
            text=True,
            env={k: v for k, v in full_env.items() if v is not None},
            cwd=cwd,
            timeout=timeout,
            preexec_fn=preexec_fn,  # only to drop capabilities, before exec
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


def commands(command: Any, path: str) -> list[tuple[str, Any]]:
    """``command`` (a click command) and every subcommand below it, each with its path
    (``"fleet collect"``)."""
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += commands(sub, f"{path} {name}")
    return found
