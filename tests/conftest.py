"""Fixtures shared by unit and integration tests, and the suite's scheduling.

The helpers behind them live in tests/support/ (the console script: tests/support/cli.py)."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.support.cli import CliRunner, cli_runner

if TYPE_CHECKING:
    from tests.support.aws import MotoServer
    from tests.support.install_helpers import PrebuiltEnvs

# pytest caches each test module as rewritten for its asserts, unless bytecode writing is off
# (PYTHONDONTWRITEBYTECODE, set on some machines): then every run and every xdist worker rewrites
# all of them again (about 10 s of CPU each). Only this process writes; the programs the tests start
# keep the environment they were given.
sys.dont_write_bytecode = False

# The Ctrl-C tests press Ctrl-C as at a terminal, where SIGINT is not ignored. A suite started in
# the background of a script ('bash .ci/run &', nohup) inherits SIGINT ignored and would hand that
# on to every neuron-env it starts, which then rightly ignores Ctrl-C as a background job should.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# What neuron-env keeps between runs (doctor's memo under XDG_CACHE_HOME, install's logs under
# XDG_STATE_HOME) goes to a folder of this test process, removed at its end: the suite writes
# nothing into the home of the person running it. Tests that look at those files set their own.
_own_home = tempfile.mkdtemp(prefix="neuron-env-test-xdg-")
atexit.register(shutil.rmtree, _own_home, ignore_errors=True)
os.environ["XDG_CACHE_HOME"] = os.path.join(_own_home, "cache")
os.environ["XDG_STATE_HOME"] = os.path.join(_own_home, "state")


# --- scheduling: the costliest test modules first ---------------------------------------------
# scripts/test.sh runs the suite on two xdist workers, each test module whole on one worker (its
# module-scoped fixtures built once). A worker that is handed a one-minute module last runs alone
# while the other has finished: so the modules start in the order of their recorded cost,
# longest first (tests/durations.json: seconds per module, from a whole run with
# NEURON_ENV_TEST_RECORD_DURATIONS=tests/durations.json). A module not recorded yet counts as
# DEFAULT_COST. Within a module the order stays as written.
DEFAULT_COST = 5.0


def _recorded_costs() -> dict[str, float]:
    try:
        costs = json.loads((Path(__file__).parent / "durations.json").read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in costs.items()} if isinstance(costs, dict) else {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    costs = _recorded_costs()
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(item.nodeid.split("::")[0], len(first_seen))

    def key(item: pytest.Item) -> tuple[float, int]:
        module = item.nodeid.split("::")[0]
        return (-costs.get(module, DEFAULT_COST), first_seen[module])

    items.sort(key=key)  # stable: each module's own order is kept


_durations: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if os.environ.get("NEURON_ENV_TEST_RECORD_DURATIONS"):
        module = report.nodeid.split("::")[0]
        _durations[module] = _durations.get(module, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    path = os.environ.get("NEURON_ENV_TEST_RECORD_DURATIONS")
    if path and _durations and not hasattr(session.config, "workerinput"):  # the controller
        ordered = dict(
            sorted(((k, round(v, 1)) for k, v in _durations.items()), key=lambda kv: -kv[1])
        )
        Path(path).write_text(json.dumps(ordered, indent=1) + "\n")


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
