"""A pytest plugin that says where the suite's CPU goes: each test's own CPU time plus that of the
processes it started and waited for (what a 2-core CI machine pays), next to its wall time.

    .venv-test/bin/pytest -p tests.support.cpu_profile -n 0 tests/integration/test_smoke.py

prints the total and the 15 costliest tests at the end; with xdist each worker keeps its own
tally (run with ``-n 0`` to see one), or set ``NEURON_ENV_CPU_PROFILE_DIR`` to a folder and each
process writes its rows there as tab-separated ``cpu wall nodeid`` lines (a whole-suite profile).
``--durations`` gives wall time only, which a loaded machine stretches; CPU time changes far less
with the load.
"""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Generator
from typing import Any

import pytest

_rows: list[tuple[str, float, float]] = []


def _cpu() -> float:
    """This process's CPU, its waited-for children's, and that of the console-script runs the
    fork server made for it (they are the server's children)."""
    from tests.support.cli import FORKSERVER

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime + FORKSERVER.cpu


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, None, None]:
    cpu, wall = _cpu(), time.perf_counter()
    yield
    _rows.append((item.nodeid, _cpu() - cpu, time.perf_counter() - wall))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    write = terminalreporter.write_line
    total_cpu, total_wall = sum(r[1] for r in _rows), sum(r[2] for r in _rows)
    write(f"CPU: {total_cpu:.1f} s, wall {total_wall:.1f} s over {len(_rows)} tests")
    for nodeid, cpu, wall in sorted(_rows, key=lambda row: -row[1])[:15]:
        write(f"  {cpu:6.1f} s CPU {wall:6.1f} s wall  {nodeid}")


def pytest_sessionfinish(session: Any) -> None:
    folder = os.environ.get("NEURON_ENV_CPU_PROFILE_DIR")
    if folder and _rows:
        name = os.environ.get("PYTEST_XDIST_WORKER", "main")
        with open(os.path.join(folder, f"{name}.tsv"), "w", encoding="utf-8") as out:
            out.writelines(f"{cpu:.3f}\t{wall:.3f}\t{nodeid}\n" for nodeid, cpu, wall in _rows)
