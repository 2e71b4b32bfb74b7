"""One Neuron-name rule for the user's stack: no Neuron name reaches an environment from any index
but the Neuron one, asked for by name or brought in as a dependency.

Real pip and uv against the local indexes. The default index serves ``userdep-a 1.0``, which
depends on ``neuron-cc``: a Neuron name no release lists and outside the old ``*neuronx*``
patterns, which only the default index has, as an impostor ``99.0`` whose ``.pth`` file writes a
marker at every interpreter start. The marker must never appear.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    fingerprint,
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
FAULT = "user-dependency-on-neuron-name"


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexes]:
    indexes = start_indexes(tmp_path_factory.mktemp("names-indexes"), FAULT)
    yield indexes
    indexes.stop()


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return install_env(tmp_path, write_install_matrix(tmp_path / "matrix"))


def install(env: dict[str, str], venv: Path, running: Indexes, *extra: str) -> tuple[int, str]:
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    result = run_cli(env, *args, *running.args(), *extra)
    assert "Traceback" not in result.stderr
    return result.returncode, flat(result.stderr)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_user_package_that_depends_on_neuron_cc_is_refused_before_anything_is_written(
    env: dict[str, str], running: Indexes, tmp_path: Path, backend: str
) -> None:
    venv = tmp_path / "env"
    code, err = install(env, venv, running, "--backend", backend, "userdep-a")
    assert code == 1, err
    assert "neuron-cc 99.0" in err and "may be an impostor" in err
    assert f"Nothing was changed: {venv} was not created." in err
    assert not running.impostor_marker.exists(), "the impostor's .pth ran"
    assert not venv.exists()
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_environment_upgraded_with_such_a_package_stays_as_it_was(
    env: dict[str, str], running: Indexes, tmp_path: Path, backend: str
) -> None:
    venv = tmp_path / "env"
    code, err = install(env, venv, running, "--backend", backend, "-q")
    assert code == 0, err
    kept = fingerprint(venv)
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("userdep-a==1.0\n")
    code, err = install(env, venv, running, "--backend", backend, "-r", str(reqs), "--yes")
    assert code == 1, err
    assert "neuron-cc 99.0" in err
    assert f"Nothing was changed: {venv} is as it was." in err
    assert fingerprint(venv) == kept
    assert "neuron-cc" not in installed(venv)
    assert not running.impostor_marker.exists(), "the impostor's .pth ran"


@pytest.mark.parametrize(
    ("package", "case"),
    [
        ("neuron-cc", "it matches *neuron*"),
        ("neuronperf==1.0", "it matches *neuron*"),
        ("nkipy==0.1", "it matches nki*"),
        ("nrtpy==1.0", "it matches nrt*"),
        ("nki_foo==1", "it matches nki*"),
        ("libneuronxla", "legacy PyTorch/XLA stack"),
        ("nki==0.0.1", "Neuron 2.90.0 pins nki"),
    ],
)
@pytest.mark.parametrize("command", ["install", "download"])
def test_a_neuron_name_the_release_does_not_ship_is_refused_with_its_case_and_nothing_fetched(
    env: dict[str, str], running: Indexes, tmp_path: Path, package: str, case: str, command: str
) -> None:
    seen = {name: running.requests(name) for name in ("neuron", "pytorch", "default")}
    where = (
        ["--venv", str(tmp_path / "env")]
        if command == "install"
        else ["-d", str(tmp_path / "wheels")]
    )
    args = [command, "--torch", "2.14", *where, "--python", python_here(), *running.args()]
    if command == "download":
        args.remove("--python")
        args.remove(python_here())
    result = run_cli(env, *args, package)
    err = flat(result.stderr)
    assert result.returncode == 2, err
    assert case in err
    assert "Traceback" not in result.stderr
    name = package.split("=")[0].replace("_", "-")
    if case.startswith("it matches"):
        assert f"{name} is a Neuron package name" in err
        assert f"pins {name}" not in err and "pins it" not in err
    assert not (tmp_path / "env").exists() and not (tmp_path / "wheels").exists()
    after = {name: running.requests(name) for name in ("neuron", "pytorch", "default")}
    assert after == seen, "an index was contacted for a refused request"
