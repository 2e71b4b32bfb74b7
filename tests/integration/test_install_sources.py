"""``--index-url MIRROR``: the mirror is the only default source, whatever pip or uv says.

The user's configuration declares another index (extra-index-url / ``[[index]]``) and a
find-links directory holding a higher ``filelock``: with ``--index-url`` neither is consulted, so
what the plan says (everything else from the mirror) is what happens.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.indexes import WheelSpec, build_wheel
from tests.support.install_helpers import (
    PrebuiltEnvs,
    StartIndexes,
    installed,
    python_here,
    run_cli,
)

pytestmark = pytest.mark.integration


def configured(tmp_path: Path, backend: str, extra_index: str, env: dict[str, str]) -> None:
    links = tmp_path / "links"
    links.mkdir()
    build_wheel(links, WheelSpec("filelock", "99.0", kind="attacker"))
    if backend == "pip":
        config = tmp_path / "pip.conf"
        config.write_text(f"[global]\nextra-index-url = {extra_index}\nfind-links = {links}\n")
        env["PIP_CONFIG_FILE"] = str(config)
    else:
        config = tmp_path / "uv.toml"
        config.write_text(f'find-links = ["{links}"]\n\n[[index]]\nurl = "{extra_index}"\n')
        env.pop("UV_NO_CONFIG")
        env["UV_CONFIG_FILE"] = str(config)


@pytest.mark.parametrize("backend", ["pip", "uv"])
def test_the_mirror_is_the_only_default_source(
    indexes: StartIndexes,
    tmp_path: Path,
    isolated_env: dict[str, str],
    prebuilt_envs: PrebuiltEnvs,
    backend: str,
) -> None:
    mirror = indexes()
    other = indexes(name="other")
    env = dict(isolated_env)
    configured(tmp_path, backend, other.urls["default"], env)
    venv = tmp_path / "env"
    prebuilt_envs.plain_venv(venv)  # a fresh python -m venv: the sources, not its creation, matter
    args = ["install", "--torch", "2.14", "--venv", str(venv), "--python", python_here()]
    result = run_cli(env, *args, *mirror.args(), "--backend", backend)
    assert result.returncode == 0, result.stderr
    assert installed(venv)["filelock"] == "3.13.1"  # the mirror's, not find-links' 99.0
    assert other.requests("default") == "", "the configured extra index was consulted"
    assert "/simple/filelock/" in mirror.requests("default")
