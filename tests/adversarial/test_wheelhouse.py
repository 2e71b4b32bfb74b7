"""The wheelhouse is checked, not trusted: its manifest is hostile input to an offline install.

One real wheelhouse is filled by ``neuron-env download`` from the local indexes; each test copies
it and edits it the way an attacker (or a bad copy) would: a manifest that says nki came from
another index, a file name leading out of the folder or a link to a file outside it, a manifest
that is ``/dev/zero``, a FIFO or nested past reason, a ``requirements.txt`` steered to an impostor
wheel, an empty folder. Every one is refused with exit 2 and a message before anything is created,
or (the impostor) installs exactly what the manifest pins.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import Result
from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    PrebuiltEnvs,
    flat,
    install_env,
    installed,
    python_here,
    run_cli,
    write_install_matrix,
)

pytestmark = pytest.mark.integration
MANIFEST = "neuron-env-wheelhouse.json"


@dataclass(frozen=True)
class World:
    indexes: Indexes
    env: dict[str, str]
    house: Path  # filled once; tests edit copies
    impostor: Path  # nki 99.0 from the default index

    def copy(self, where: Path) -> Path:
        house = where / "wheels"
        shutil.copytree(self.house, house)
        return house

    def install(self, house: Path, venv: Path, *extra: str, timeout: float = 300) -> Result:
        args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
        args += ["--wheelhouse", str(house), "--offline", *extra]
        return run_cli(self.env, *args, timeout=timeout)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("wheelhouse")
    running = start_indexes(tmp / "indexes")
    env = install_env(tmp, write_install_matrix(tmp / "matrix"))
    house = tmp / "house"
    result = run_cli(env, "download", "--torch", "2.14", "-d", str(house), *running.args())
    assert result.returncode == 0, result.stderr
    pip = [python_here(), "-m", "pip", "download", "--no-deps", "nki==99.0", "-d", str(tmp)]
    pip += ["--index-url", running.urls["default"]]
    subprocess.run(pip, env=env, check=True, capture_output=True)
    (impostor,) = tmp.glob("nki-99.0-*.whl")
    running.stop()  # the air gap: every install below is offline
    yield World(running, env, house, impostor)


def edit_manifest(house: Path, name: str, **changes: str) -> None:
    path = house / MANIFEST
    doc: dict[str, Any] = json.loads(path.read_text())
    (wheel,) = [w for w in doc["wheelhouse"]["files"] if w["name"] == name]
    wheel.update(changes)
    path.write_text(json.dumps(doc))


def refused(world: World, house: Path, where: Path) -> str:
    venv = where / "env"
    result = world.install(house, venv, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert not venv.exists()
    return flat(result.stderr)


def test_a_manifest_routing_nki_to_another_index_is_refused(world: World, tmp_path: Path) -> None:
    house = world.copy(tmp_path)
    edit_manifest(house, "nki", route="mirror", index_url="http://127.0.0.1:9/simple")
    message = refused(world, house, tmp_path)
    assert (
        "its manifest says nki 0.7.0 came from the index 'mirror' (http://127.0.0.1:9/simple)"
        in (message)
    )
    assert "but Neuron 2.90.0 routes nki to the index 'neuron' (http" in message


def test_a_manifest_taking_nki_from_the_default_index_is_refused(
    world: World, tmp_path: Path
) -> None:
    house = world.copy(tmp_path)
    edit_manifest(house, "nki", route="default", index_url="")
    assert "nki 0.7.0 came from the index 'default'" in refused(world, house, tmp_path)


def test_a_file_name_leading_out_of_the_wheelhouse_is_refused(world: World, tmp_path: Path) -> None:
    house = world.copy(tmp_path)
    edit_manifest(house, "nki", file="../../../../etc/passwd")
    message = refused(world, house, tmp_path)
    assert "names the file '../../../../etc/passwd' for nki, which is not a file inside" in message


def test_a_link_to_a_wheel_outside_the_wheelhouse_is_refused(world: World, tmp_path: Path) -> None:
    house = world.copy(tmp_path)
    (wheel,) = house.glob("nki-*.whl")
    outside = tmp_path / wheel.name
    wheel.rename(outside)
    wheel.symlink_to(outside)  # same bytes, same hash: only where it lives is wrong
    assert f"names the file '{wheel.name}' for nki, which is not a file inside" in refused(
        world, house, tmp_path
    )


def test_a_file_that_is_another_wheel_is_refused(world: World, tmp_path: Path) -> None:
    house = world.copy(tmp_path)
    shutil.copy(world.impostor, house)
    digest = hashlib.sha256(world.impostor.read_bytes()).hexdigest()
    edit_manifest(house, "nki", file=world.impostor.name, sha256=digest)
    assert "which is not a wheel of that name and version" in refused(world, house, tmp_path)


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_manifest_that_never_ends_is_refused_at_once(
    world: World, tmp_path: Path, kind: str
) -> None:
    house = world.copy(tmp_path)
    (house / MANIFEST).unlink()
    if kind == "fifo":
        os.mkfifo(house / MANIFEST)
    else:
        (house / MANIFEST).symlink_to("/dev/zero")
    message = refused(world, house, tmp_path)
    assert f"{MANIFEST} is not a neuron-env wheelhouse manifest (not a regular file" in message


def test_a_deeply_nested_manifest_is_bad_input(world: World, tmp_path: Path) -> None:
    house = world.copy(tmp_path)
    (house / MANIFEST).write_text("[" * 100_000 + "]" * 100_000)
    assert "nested more than 16 levels deep" in refused(world, house, tmp_path)


def test_an_empty_wheelhouse_says_it_is_empty(world: World, tmp_path: Path) -> None:
    house = tmp_path / "wheels"
    house.mkdir()
    message = refused(world, house, tmp_path)
    assert f"Wheelhouse {house} is empty: it holds no {MANIFEST} and no wheel" in message


def test_a_steered_requirements_file_cannot_install_an_impostor(
    world: World, tmp_path: Path, prebuilt_envs: PrebuiltEnvs
) -> None:
    """requirements.txt is a convenience for people; the install follows the checked manifest."""
    house = world.copy(tmp_path)
    shutil.copy(world.impostor, house)
    digest = hashlib.sha256(world.impostor.read_bytes()).hexdigest()
    text = (house / "requirements.txt").read_text()
    start = text.index("nki==0.7.0")
    end = text.index("\n", text.index("--hash", start))
    (house / "requirements.txt").write_text(
        text[:start] + f"nki==99.0 \\\n    --hash=sha256:{digest}" + text[end:]
    )
    venv = tmp_path / "env"
    prebuilt_envs.plain_venv(venv)  # a fresh python -m venv: pip's install is what is tested
    result = world.install(house, venv, "--backend", "pip")
    assert result.returncode == 0, result.stderr
    assert installed(venv)["nki"] == "0.7.0"
