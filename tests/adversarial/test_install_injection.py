"""Dependency confusion under both backends: no Neuron name comes from an unrouted index.

The default index offers an impostor under a Neuron name that the plan does not pin, with a
higher version and a ``.pth`` file that writes a marker at every interpreter start. The marker
must never appear: the impostor is never installed, not even into the staging environment.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    PrebuiltEnvs,
    flat,
    install_env,
    installed,
    leftovers,
    python_here,
    run_cli,
    write_install_matrix,
)

pytestmark = pytest.mark.integration

BACKENDS = ["uv", "pip"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return install_env(tmp_path, write_install_matrix(tmp_path / "matrix"))


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[list[Indexes]]:
    started: list[Indexes] = []
    yield started
    for running in started:
        running.stop()


def install(env: dict[str, str], venv: Path, running: Indexes, backend: str) -> tuple[int, str]:
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    result = run_cli(env, *args, *running.args(), "--backend", backend)
    return result.returncode, flat(result.stderr)


@pytest.mark.parametrize(
    ("fault", "impostor"),
    [
        ("neuron-dependency-impostor", "libneuronxla 99.0"),
        ("neuron-pattern-dependency-impostor", "neuronx-hwm 99.0"),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unpinned_neuron_dependency_only_the_default_index_has_is_never_installed(
    env: dict[str, str],
    serve: list[Indexes],
    tmp_path: Path,
    backend: str,
    fault: str,
    impostor: str,
) -> None:
    running = start_indexes(tmp_path / "indexes", fault)
    serve.append(running)
    venv = tmp_path / "env"
    code, err = install(env, venv, running, backend)
    assert code == 1, err
    assert impostor in err and "may be an impostor" in err
    assert f"Nothing was changed: {venv} was not created." in err
    assert not running.impostor_marker.exists(), "the impostor's .pth ran"
    assert not venv.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_unpinned_neuron_dependency_comes_from_the_neuron_index(
    env: dict[str, str],
    serve: list[Indexes],
    tmp_path: Path,
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
) -> None:
    running = start_indexes(tmp_path / "indexes", "neuron-dependency-on-neuron")
    serve.append(running)
    venv = tmp_path / "env"
    prebuilt_envs.plain_venv(venv)  # a fresh python -m venv: where libneuronxla comes from matters
    code, err = install(env, venv, running, backend)
    assert code == 0, err
    versions = installed(venv)
    assert versions["libneuronxla"] == "2.0"  # the Neuron index's, not the default index's 99.0
    assert versions["torch-neuronx"] == "2.14.3.0.1"
    assert not running.impostor_marker.exists(), "the impostor's .pth ran"
