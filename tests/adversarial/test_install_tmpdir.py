"""A signal while ``install``'s backend works leaves nothing in the user's TMPDIR.

The backend's temporary folders live in the staging box, which the install removes whatever
happens (or the next install, after a SIGKILL). The real console script upgrades a 2.13
environment with ``TMPDIR`` set to a fresh folder; the local PyTorch index holds the backend's
request for torch's page (resolving) or stalls a third into the torch wheel (downloading); the
test sees the request arrive, signals neuron-env, and finds that folder empty.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.indexes import PHASES, Indexes, start_indexes, wait_for_new_request
from tests.support.install_helpers import (
    PrebuiltEnvs,
    install_env,
    start_install,
    write_install_matrix,
)
from tests.support.processes import children_of, group_members, interrupted_lines

pytestmark = pytest.mark.integration

# pip leaves its folders in TMPDIR when killed; uv (which keeps them in its cache) guards the rule
CASES = [
    *(("pip", sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGKILL)),
    *(("uv", sig) for sig in (signal.SIGTERM, signal.SIGKILL)),
]


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_install_matrix(tmp_path_factory.mktemp("matrix"))


@pytest.fixture(scope="module", params=list(PHASES))
def phase(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Indexes, str]]:
    fault, fragment = PHASES[request.param]
    indexes = start_indexes(tmp_path_factory.mktemp(request.param), fault)
    yield indexes, fragment
    indexes.stop()


def end_group(pid: int) -> None:
    """After a SIGKILL of neuron-env its backend runs on, orphaned: the test ends what it began."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


@pytest.mark.parametrize(("backend", "sig"), CASES, ids=[f"{b}-{s.name}" for b, s in CASES])
def test_a_signal_during_the_backend_phase_leaves_the_users_tmpdir_empty(
    tmp_path: Path,
    matrix: Path,
    phase: tuple[Indexes, str],
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
    sig: signal.Signals,
) -> None:
    indexes, fragment = phase
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    env = {**install_env(tmp_path, matrix), "TMPDIR": str(tmpdir)}
    venv = tmp_path / "env"
    # The 2.13 -> 2.14 upgrade: the backend's phase, without building a venv first (pip's costs
    # seconds), from an environment that backend made (so that pip need not be bootstrapped).
    prebuilt_envs.copy(venv, "--backend", backend, torch="2.13")
    seen = len(indexes.requests("pytorch"))  # the module's earlier runs asked too
    proc = start_install(env, venv, indexes.args(), "--backend", backend)
    children: list[int] = []
    try:
        wait_for_new_request(indexes, fragment, seen, proc)
        children = children_of(proc.pid)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
        for child in children if sig == signal.SIGKILL else ():
            end_group(child)
    assert children, f"{backend} was not running when the signal came"
    assert sorted(p.name for p in tmpdir.iterdir()) == []
    if sig == signal.SIGKILL:
        assert proc.returncode == -signal.SIGKILL
        return
    assert proc.returncode == 128 + sig, err
    assert len(interrupted_lines(err)) == 1, err
    assert "Traceback" not in err
    assert [group_members(pid) for pid in children] == [[]] * len(children)
