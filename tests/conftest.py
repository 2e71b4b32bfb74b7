"""Fixtures shared by unit and integration tests."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from tests.support.aws import MotoServer
    from tests.support.install_helpers import PrebuiltEnvs

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


@pytest.fixture(scope="session")
def prebuilt_envs(tmp_path_factory: pytest.TempPathFactory) -> PrebuiltEnvs:
    """The install tests' starting environments, each made once per run: the xdist workers share
    them through the run's base folder (the parent of each worker's own)."""
    from tests.support.install_helpers import PrebuiltEnvs

    base = tmp_path_factory.getbasetemp()
    return PrebuiltEnvs(
        (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "prebuilt"
    )


@pytest.fixture(scope="session")
def moto_session() -> Iterator[MotoServer]:
    """One moto server per session (and process), reset by each test that uses it."""
    from tests.support.aws import moto_server

    with moto_server() as server:
        yield server


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
