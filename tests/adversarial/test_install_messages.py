"""A failed install names what really happened: a stall, an HTTP error, an unknown host.

Each fault is served for real (``tests/data/install/faults/``); the message must name it and not
another cause (a stall is not "a corrupt wheel", an HTTP 500 not "no package matches a pin", a
DNS failure not "a download was cut off"). Full disks, which a test cannot make for real without
privileges, are covered by ``tests/unit/test_install_messages.py``.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    flat,
    install_env,
    leftovers,
    python_here,
    run_cli,
    write_install_matrix,
)

pytestmark = pytest.mark.integration

BACKENDS = ["uv", "pip"]


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[list[Indexes]]:
    started: list[Indexes] = []
    yield started
    for running in started:
        running.stop()


def failed_install(
    tmp_path: Path, serve: list[Indexes], fault: str, backend: str, **env: str
) -> str:
    running = start_indexes(tmp_path / "indexes", fault)
    serve.append(running)
    settings = {**install_env(tmp_path, write_install_matrix(tmp_path / "matrix")), **env}
    venv = tmp_path / "env"
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    result = run_cli(settings, *args, *running.args(), "--backend", backend)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert f"Nothing was changed: {venv} was not created." in flat(result.stderr)
    assert not venv.exists() and leftovers(tmp_path) == []
    return flat(result.stderr)


def test_a_stalled_download_is_said_to_have_stalled(tmp_path: Path, serve: list[Indexes]) -> None:
    # uv's resolver reports the read timeout as "Failed to read from zip file" (pip's own words,
    # "Read timed out", are matched by the unit tests of the diagnosis).
    message = failed_install(tmp_path, serve, "download-stalls", "uv", UV_HTTP_TIMEOUT="2")
    assert "a download stalled or timed out" in message
    assert "corrupt" not in message
    assert "UV_HTTP_TIMEOUT" in message  # how to give a slow link more time


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_http_500_is_named(tmp_path: Path, serve: list[Indexes], backend: str) -> None:
    message = failed_install(tmp_path, serve, "neuron-index-500", backend)
    assert "index at http://127.0.0.1:" in message and "returned HTTP 500" in message
    assert "no package on the indexes matches" not in message


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_host_that_does_not_resolve_is_named(
    tmp_path: Path, serve: list[Indexes], backend: str
) -> None:
    # pip's default retries print "connection broken by NewConnectionError(...)" for each try.
    message = failed_install(tmp_path, serve, "neuron-index-unknown-host", backend, PIP_RETRIES="1")
    assert "cannot resolve host neuron-index.invalid (DNS lookup failed)" in message
    assert "cut off" not in message
