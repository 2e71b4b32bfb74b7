"""Project defaults: ``[tool.neuron-env]`` in the project's pyproject.toml (or neuron-env.toml),
read by doctor, preflight and install from the project folder; flags win over the file."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import CliRunner, cli_runner
from tests.support.hosts import (
    build_sysroot,
    build_target,
    imds_environment,
    load_scenario,
    write_matrix,
)


@dataclass(frozen=True)
class Project:
    folder: Path
    run: CliRunner
    host: tuple[str, ...]
    env: dict[str, str | None]

    def settings(self, text: str, name: str = "pyproject.toml") -> None:
        (self.folder / name).write_text(text)


def project_on(scenario_name: str, tmp_path: Path) -> Iterator[Project]:
    scenario = load_scenario(scenario_name)
    sysroot, python = build_sysroot(scenario, tmp_path), build_target(scenario, tmp_path)
    matrix = write_matrix(scenario.matrix, tmp_path)
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)  # the repository root ends the search
    (folder / "src").mkdir()
    with imds_environment(scenario) as env:
        yield Project(
            folder,
            cli_runner(folder / "src"),  # run from a subfolder: the project's file still counts
            ("--sysroot", str(sysroot), "--python", str(python)),
            {**env, "NEURON_ENV_MATRIX_DIR": str(matrix)},
        )


@pytest.fixture
def healthy(tmp_path: Path) -> Iterator[Project]:
    yield from project_on("healthy-trn2-ubuntu-26.04", tmp_path)


@pytest.fixture
def no_driver(tmp_path: Path) -> Iterator[Project]:
    yield from project_on("devices-missing", tmp_path)


def test_doctor_judges_against_the_projects_release(healthy: Project) -> None:
    healthy.settings('[project]\nname = "x"\n\n[tool.neuron-env]\nrelease = "2.34.0"\n')
    result = healthy.run("doctor", *healthy.host, "--format", "json", env=healthy.env)
    assert json.loads(result.stdout)["release"] == "2.34.0", result.stderr


def test_a_flag_wins_over_the_project_file(healthy: Project) -> None:
    healthy.settings('release = "2.34.0"\n', name="neuron-env.toml")
    result = healthy.run(
        "doctor", *healthy.host, "--release", "2.33.1", "--format", "json", env=healthy.env
    )
    assert json.loads(result.stdout)["release"] == "2.33.1", result.stderr


def test_an_allowed_check_shows_its_reason_and_does_not_fail_doctor(no_driver: Project) -> None:
    failing = no_driver.run("doctor", *no_driver.host, env=no_driver.env)
    assert failing.returncode == 1
    no_driver.settings('[tool.neuron-env]\nallow = {"driver.devices" = "build host, no device"}\n')
    result = no_driver.run("doctor", *no_driver.host, env=no_driver.env)
    assert result.returncode == 0, result.stdout
    assert "(allowed: build host, no device; does not fail the run)" in result.stdout
    as_json = no_driver.run("doctor", *no_driver.host, "--format", "json", env=no_driver.env)
    document = json.loads(as_json.stdout)
    assert document["allowed_reasons"] == {"driver.devices": "build host, no device"}
    assert document["allowed"] == ["driver.devices"]
    assert as_json.returncode == 0


def test_preflight_reads_the_allow_of_the_project_file(no_driver: Project) -> None:
    no_driver.settings('[tool.neuron-env]\nallow = {"driver.devices" = "build host"}\n')
    result = no_driver.run("preflight", *no_driver.host, "--level", "0", env=no_driver.env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "(allowed: build host; does not fail the run)" in result.stdout


def test_an_unknown_key_is_bad_input_with_a_suggestion(healthy: Project) -> None:
    healthy.settings('[tool.neuron-env]\nrelaese = "2.34.0"\n')
    result = healthy.run("doctor", *healthy.host, env=healthy.env)
    assert result.returncode == 2
    assert "unknown key 'relaese'; did you mean 'release'?" in result.stderr
    assert "Traceback" not in result.stderr


def test_an_unknown_check_id_in_allow_is_bad_input_with_a_suggestion(healthy: Project) -> None:
    healthy.settings('[tool.neuron-env]\nallow = {"env.cach" = "scratch disk"}\n')
    result = healthy.run("preflight", *healthy.host, "--level", "0", env=healthy.env)
    assert result.returncode == 2
    assert "unknown check id 'env.cach'; did you mean 'env.cache'?" in result.stderr


@pytest.mark.parametrize("kind", ["fifo", "link-to-device"])
def test_a_project_file_that_is_not_a_regular_file_is_bad_input_not_ignored(
    healthy: Project, kind: str
) -> None:
    path = healthy.folder / "neuron-env.toml"
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
    result = healthy.run("doctor", *healthy.host, env=healthy.env, timeout=30)
    assert result.returncode == 2, result.stderr
    assert f"Cannot read {path}" in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_a_file_outside_the_repository_is_not_read(healthy: Project) -> None:
    (healthy.folder.parent / "neuron-env.toml").write_text('relaese = "typo outside"\n')
    result = healthy.run("doctor", *healthy.host, env=healthy.env)
    assert result.returncode == 0, result.stderr
