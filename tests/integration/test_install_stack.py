"""``install --torch X.Y PACKAGE ... -r FILE``: the user's whole stack, with the Neuron rules kept.

Real pip and uv against the local indexes: the Neuron index has the companion
``torchtitan-neuron 0.2.2+neuron.1``; the default index its ``0.0.1`` placeholder, an attacker's
``99.0``, a newer ``torch 2.15.0``, a harmless ``stack-tool`` and ``greedy``, which pins
``torch==2.15.0``. One index set serves the whole module (each test reads only its own venvs).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, CliRunner
from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    PrebuiltEnvs,
    fingerprint,
    flat,
    install_env,
    installed,
    python_here,
    run_cli,
)

pytestmark = pytest.mark.integration

BACKENDS = ["uv", "pip"]
STACK = ("torchtitan-neuron", "stack-tool")


@pytest.fixture(scope="module")
def stack_indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexes]:
    running = start_indexes(tmp_path_factory.mktemp("stack-indexes"))
    yield running
    running.stop()


@pytest.fixture
def stack_matrix(install_matrix_dir: Path) -> Path:
    return install_matrix_dir


def run(tmp: Path, matrix: Path, *args: str) -> tuple[int, str, str]:
    result = run_cli(install_env(tmp, matrix), *args)
    return result.returncode, result.stdout, result.stderr


def install_args(venv: Path, running: Indexes, *extra: str) -> list[str]:
    return [
        "install", "--torch", "2.14", "--venv", str(venv), "--python", python_here(),
        *running.args(), *extra,
    ]  # fmt: skip


@pytest.mark.parametrize("backend", BACKENDS)
def test_stack_added_to_an_existing_venv_each_from_its_index_and_a_conflict_changes_nothing(
    stack_indexes: Indexes,
    stack_matrix: Path,
    tmp_path: Path,
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
) -> None:
    venv = tmp_path / "env"
    prebuilt_envs.copy(venv, torch="2.14")  # as a plain install from these indexes makes it
    before = installed(venv)
    assert "torchtitan-neuron" not in before

    # The plan says what comes from where, and that what is there stays.
    args = install_args(venv, stack_indexes, "--backend", backend, *STACK)
    code, out, err = run(tmp_path, stack_matrix, *args, "--dry-run", "--json")
    assert code == 0, err
    plan = json.loads(out)["plan"]
    assert plan["action"] == "upgrade"
    packages = {p["name"]: p for p in plan["packages"]}
    assert packages["torchtitan-neuron"]["spec"] == "==0.2.2+neuron.1"
    assert packages["torchtitan-neuron"]["route"] == "neuron"
    assert packages["stack-tool"]["route"] == "default"
    assert "command line" in packages["stack-tool"]["requested"]
    assert packages["torch"]["requested"] == ""
    codes = {n["code"] for n in plan["notes"]}
    assert {"install.keeps-packages", "install.user-packages"} <= codes

    code, out, err = run(tmp_path, stack_matrix, *args, "--yes")
    assert code == 0, err
    after = installed(venv)
    assert after["torchtitan-neuron"] == "0.2.2+neuron.1"  # not the 0.0.1 placeholder nor 99.0
    assert (after["stack-tool"], after["extra-tool"]) == ("1.2", "1.0")
    for name in ("torch", "torch-neuronx", "neuronx-cc", "nki", "filelock"):
        assert after[name] == before[name], f"{name} moved"
    assert "/simple/torchtitan-neuron/" in stack_indexes.requests("neuron")
    assert "/simple/torchtitan-neuron/" not in stack_indexes.requests("default")
    assert "/simple/stack-tool/" in stack_indexes.requests("default")
    assert "torchtitan-neuron 0.2.2+neuron.1" in out and "stack-tool 1.2" in out

    # A package that needs another torch fails the install and leaves the venv as it was.
    kept = fingerprint(venv)
    greedy = install_args(venv, stack_indexes, "--backend", backend, "greedy", "--yes")
    code, _, err = run(tmp_path, stack_matrix, *greedy)
    assert code == 1, err
    message = flat(err)
    assert "greedy" in message
    assert "needs torch==2.15.0; Neuron 2.90.0 pairs torch 2.14.0" in message
    assert f"Nothing was changed: {venv} is as it was." in message
    assert fingerprint(venv) == kept
    assert [p.name for p in tmp_path.iterdir() if "staging" in p.name] == []


def test_requirements_file_with_an_unknown_neuron_name_is_refused_before_anything(
    stack_indexes: Indexes, stack_matrix: Path, tmp_path: Path
) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("# our stack\nstack-tool>=1.0  # tools\n\nneuronx-distributed-training\n")
    seen = {name: stack_indexes.requests(name) for name in ("neuron", "pytorch", "default")}
    venv = tmp_path / "env"
    code, _, err = run(tmp_path, stack_matrix, *install_args(venv, stack_indexes, "-r", str(reqs)))
    assert code == 2, err
    message = flat(err)
    assert f"'neuronx-distributed-training' ({reqs}:4)" in message
    assert "legacy PyTorch/XLA stack" in message and "TorchTitan Neuron" in message
    assert "Traceback" not in err
    assert not venv.exists()
    assert [p.name for p in tmp_path.iterdir() if "neuron-env" in p.name] == []
    after = {name: stack_indexes.requests(name) for name in ("neuron", "pytorch", "default")}
    assert after == seen, "an index was contacted for a refused install"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("--index-url http://127.0.0.1:9/simple", "the option line '--index-url"),
        ("-e ./src", "the option line '-e ./src'"),
        ("torch>=2.15", "excludes torch 2.14.0"),
        ("torchtitan-neuron==0.0.1", "excludes torchtitan-neuron 0.2.2+neuron.1"),
        ("not a requirement!", "is not a requirement"),
    ],
)
def test_bad_requirements_are_exit_2_naming_the_file_and_line(
    stack_indexes: Indexes, stack_matrix: Path, tmp_path: Path, line: str, expected: str
) -> None:
    reqs = tmp_path / "reqs.txt"
    reqs.write_text(f"stack-tool\n{line}\n")
    venv = tmp_path / "env"
    args = install_args(venv, stack_indexes, "--dry-run", "--requirement", str(reqs))
    code, _, err = run(tmp_path, stack_matrix, *args)
    assert code == 2, err
    assert expected in flat(err)
    assert f"{reqs}:2" in flat(err)
    assert not venv.exists()


def test_release_short_option_is_gone_and_r_reads_requirements(
    stack_indexes: Indexes, stack_matrix: Path, tmp_path: Path
) -> None:
    """``-r`` used to mean --release on install; now ``-r 2.90.0`` names a (missing) file."""
    args = install_args(tmp_path / "env", stack_indexes, "--dry-run", "-r", "2.90.0")
    code, _, err = run(tmp_path, stack_matrix, *args)
    assert code == 2
    assert "2.90.0" in err and "requirements file" in flat(err)
    code, out, _ = run(tmp_path, stack_matrix, "install", "--help")
    assert code == 0
    assert "--requirement" in out and "-r" in out


@dataclass(frozen=True)
class Exported:
    """The stack's lock (``install --export``), its wheelhouse (``download``), what each said."""

    export: tuple[int, str, str]
    lock: Path
    download: tuple[int, str, str]
    house: Path


@pytest.fixture(scope="module")
def exported(
    stack_indexes: Indexes, install_matrix_dir: Path, tmp_path_factory: pytest.TempPathFactory
) -> Exported:
    """Made once for both backends' offline installs (neither command takes a backend)."""
    tmp = tmp_path_factory.mktemp("stack-export")
    lock = tmp / "lock.txt"
    export = run(
        tmp, install_matrix_dir, *install_args(tmp / "x", stack_indexes, *STACK),
        "--export", str(lock),
    )  # fmt: skip
    house = tmp / "wheels"
    download = ["download", "--torch", "2.14", "-d", str(house), *stack_indexes.args(), *STACK]
    return Exported(export, lock, run(tmp, install_matrix_dir, *download, "-q"), house)


@pytest.mark.parametrize("backend", BACKENDS)
def test_export_and_wheelhouse_cover_the_stack_and_install_it_offline(
    exported: Exported,
    stack_matrix: Path,
    tmp_path: Path,
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
) -> None:
    code, _, err = exported.export
    assert code == 0, err
    lock = exported.lock.read_text()
    for pinned in ("torchtitan-neuron==0.2.2+neuron.1", "stack-tool==1.2", "extra-tool==1.0"):
        assert pinned in lock
    assert lock.count("--hash=sha256:") == lock.count("==")

    code, _, err = exported.download
    assert code == 0, err
    house = exported.house
    venv = tmp_path / "env"
    prebuilt_envs.plain_venv(venv)  # a fresh python -m venv: the stack's offline install matters
    offline = [
        "install", "--torch", "2.14", "--venv", str(venv), "--python", python_here(),
        "--wheelhouse", str(house), "--offline", "--backend", backend, *STACK, "-q",
    ]  # fmt: skip
    code, _, err = run(tmp_path, stack_matrix, *offline)
    assert code == 0, err
    versions = installed(venv)
    assert versions["torchtitan-neuron"] == "0.2.2+neuron.1"
    assert versions["stack-tool"] == "1.2"
    assert versions["torch"] == "2.14.0+cpu"
    locked = dict(
        line.split(" ")[0].split("==") for line in lock.splitlines() if line[:1].isalnum()
    )
    assert {name: versions[name] for name in locked} == locked  # the exported set, exactly


def test_offline_install_of_a_package_the_wheelhouse_lacks_is_refused_before_anything(
    stack_indexes: Indexes, stack_matrix: Path, tmp_path: Path
) -> None:
    house = tmp_path / "wheels"
    download = ["download", "--torch", "2.14", "-d", str(house), *stack_indexes.args(), "-q"]
    code, _, err = run(tmp_path, stack_matrix, *download)
    assert code == 0, err
    venv = tmp_path / "env"
    offline = [
        "install", "--torch", "2.14", "--venv", str(venv), "--python", python_here(),
        "--wheelhouse", str(house), "--offline", "stack-tool", "--yes",
    ]  # fmt: skip
    code, _, err = run(tmp_path, stack_matrix, *offline)
    assert code == 2, err
    assert f"Wheelhouse {house} has no stack-tool" in flat(err)
    assert f"{NEURON_ENV} download --torch 2.14" in flat(err) and "stack-tool" in flat(err)
    assert not venv.exists()


@pytest.mark.parametrize(("package", "says"), [
    ("neuronx-distributed", "legacy PyTorch/XLA stack"),
    ("torch-xla", "legacy PyTorch/XLA stack"),
])  # fmt: skip
def test_a_package_the_release_does_not_ship_is_named_before_the_interpreter(
    cli: CliRunner, tmp_path: Path, package: str, says: str
) -> None:
    # neuron-env's own Python 3.11 is out of the pairing's range: that would be the first error,
    # but the package is the answer the user needs, and it does not depend on the interpreter.
    result = cli("install", "--torch", "2.14", "--venv", str(tmp_path / "env"), "--python",
                 python_here(), package, "--dry-run")  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert says in " ".join(result.stderr.split()) and package in result.stderr
    assert not (tmp_path / "env").exists()
