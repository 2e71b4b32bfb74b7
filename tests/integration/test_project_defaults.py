"""Project defaults: ``[tool.neuron-env]`` in the project's pyproject.toml (or neuron-env.toml),
read by doctor, preflight and install from the project folder; flags win over the file."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import CliRunner, cli_runner
from tests.support.hosts import scenario_host


@dataclass(frozen=True)
class Project:
    folder: Path
    run: CliRunner
    host: tuple[str, ...]
    env: dict[str, str | None]

    def settings(self, text: str, name: str = "pyproject.toml") -> None:
        (self.folder / name).write_text(text)


def project_on(scenario_name: str, tmp_path: Path) -> Iterator[Project]:
    folder = tmp_path / "project"
    (folder / ".git").mkdir(parents=True)  # the repository root ends the search
    (folder / "src").mkdir()
    for host in scenario_host(scenario_name, tmp_path):
        # run from a subfolder: the project's file still counts
        yield Project(folder, cli_runner(folder / "src"), tuple(host.probe()), {**host.env})


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
    source = f"{no_driver.folder / 'pyproject.toml'} [tool.neuron-env]"
    said = " ".join(result.stdout.split())
    assert f"(allowed by {source}: build host, no device; does not fail the run)" in said
    assert f"Project settings: {source}." in said  # the header names the file applied
    as_json = no_driver.run("doctor", *no_driver.host, "--format", "json", env=no_driver.env)
    document = json.loads(as_json.stdout)
    assert document["allowed_reasons"] == {"driver.devices": "build host, no device"}
    assert document["config"] == source
    assert document["allowed_by"] == {
        "driver.devices": f"allowed by {source}: build host, no device"
    }
    assert document["allowed"] == ["driver.devices"]
    assert as_json.returncode == 0


def test_preflight_reads_the_allow_of_the_project_file(no_driver: Project) -> None:
    no_driver.settings('[tool.neuron-env]\nallow = {"driver.devices" = "build host"}\n')
    result = no_driver.run("preflight", *no_driver.host, "--level", "0", env=no_driver.env)
    assert result.returncode == 0, result.stdout + result.stderr
    source = f"{no_driver.folder / 'pyproject.toml'} [tool.neuron-env]"
    said = " ".join(result.stdout.split())
    assert f"(allowed by {source}: build host; does not fail the run)" in said


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


# --- which project file is trusted, and said so (issue 38 §2) -----------------------------------

ALLOW_DEVICES = '[tool.neuron-env]\nallow = {"driver.devices" = "planted"}\n'


def nobody() -> tuple[int, int]:
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


@pytest.mark.skipif(os.geteuid() != 0, reason="plants a file owned by another user")
def test_a_file_planted_in_a_shared_folder_is_ignored_and_named(no_driver: Project) -> None:
    shared = no_driver.folder.parent / "shared"  # like /tmp: sticky, writable by all, no .git
    shared.mkdir()
    shared.chmod(0o1777)
    planted = shared / "neuron-env.toml"
    planted.write_text('allow = {"driver.devices" = "planted"}\n')
    os.chown(planted, *nobody())
    run = cli_runner(shared)

    result = run("doctor", *no_driver.host, env=no_driver.env)

    assert result.returncode == 1, result.stdout  # the broken host is not turned Ready
    said = " ".join(result.stdout.split())
    assert f"Ignored project file {planted}: it is owned by nobody (uid {nobody()[0]})" in said
    document = json.loads(
        run("doctor", *no_driver.host, "--format", "json", env=no_driver.env).stdout
    )
    assert document["config"] is None
    assert document["config_ignored"] == [
        {
            "path": str(planted),
            "reason": f"it is owned by nobody (uid {nobody()[0]}), not by you or root",
        }
    ]


@pytest.mark.parametrize("mode", [0o666, 0o646])
def test_a_file_other_users_may_write_is_ignored(no_driver: Project, mode: int) -> None:
    no_driver.settings(ALLOW_DEVICES)
    (no_driver.folder / "pyproject.toml").chmod(mode)
    result = no_driver.run("doctor", *no_driver.host, "--format", "json", env=no_driver.env)
    assert result.returncode == 1, result.stdout
    document = json.loads(result.stdout)
    assert document["config_ignored"] == [
        {"path": str(no_driver.folder / "pyproject.toml"), "reason": "every user may write it"}
    ]


@pytest.mark.parametrize("how", ["flag", "environment"])
def test_no_config_ignores_every_project_file(no_driver: Project, how: str) -> None:
    no_driver.settings(ALLOW_DEVICES)
    flag = ("--no-config",) if how == "flag" else ()
    env = {**no_driver.env, "NEURON_ENV_NO_CONFIG": "1" if how == "environment" else None}
    for command in (("doctor",), ("preflight", "--level", "0")):
        result = no_driver.run(*command, *no_driver.host, *flag, "--format", "json", env=env)
        assert result.returncode == 1, result.stdout
        document = json.loads(result.stdout)
        assert document["config"] is None and document["allowed"] == []


def test_the_search_stops_at_the_home_directory(tmp_path: Path, healthy: Project) -> None:
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    (tmp_path / "neuron-env.toml").write_text('relaese = "above home: never read"\n')
    run = cli_runner(home / "work")
    result = run("doctor", *healthy.host, env={**healthy.env, "HOME": str(home)})
    assert result.returncode == 0, result.stderr


@pytest.mark.parametrize(
    "spelling",
    [
        '[tool.neuron-env]\nrelease = "2.34.0"\n',
        '[tool."neuron-env"]\nrelease = "2.34.0"\n',
        "[tool.'neuron-env']\nrelease = '2.34.0'\n",
        '[ tool . "neuron-env" ]\nrelease = "2.34.0"\n',
        '[tool]\nneuron-env.release = "2.34.0"\n',
        '[tool]\nneuron-env = { release = "2.34.0" }\n',
        'tool.neuron-env.release = "2.34.0"\n',
        'tool."neuron-env" = { release = "2.34.0" }\n',
        'tool = { neuron-env = { release = "2.34.0" } }\n',
        '[tool."neuron\\u002denv"]\nrelease = "2.34.0"\n',
    ],
)
def test_every_toml_spelling_of_the_table_is_read(healthy: Project, spelling: str) -> None:
    healthy.settings('[project]\nname = "x"\n\n' + spelling if spelling[0] == "[" else spelling)
    result = healthy.run("doctor", *healthy.host, "--format", "json", env=healthy.env)
    document = json.loads(result.stdout)
    assert document["release"] == "2.34.0", (spelling, result.stderr)
    assert document["config"] == f"{healthy.folder / 'pyproject.toml'} [tool.neuron-env]"


def _in_a_mount(mount_point: Path) -> tuple[str, ...]:
    """A prefix that runs the command in a private mount namespace (nothing leaks to the
    machine) where a fresh tmpfs is mounted on ``mount_point``, from its folder ``work``."""
    script = (
        'mount -t tmpfs -o size=1m,mode=0755 tmpfs "$0" && mkdir "$0/work" && cd "$0/work"'
        ' && exec "$@"'
    )
    return (
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "--",
        "sh",
        "-c",
        script,
        str(mount_point),
    )


def _can_mount(folder: Path) -> bool:
    probe = subprocess.run(
        [
            "unshare",
            "--mount",
            "--propagation",
            "private",
            "--",
            "mount",
            "-t",
            "tmpfs",
            "tmpfs",
            str(folder),
        ],
        capture_output=True,
        check=False,
    )
    return probe.returncode == 0


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("unshare"), reason="mounts a tmpfs")
def test_the_search_stops_at_a_filesystem_boundary(tmp_path: Path, healthy: Project) -> None:
    """A project file above a mount point (another filesystem: a share another user controls)
    is never read from inside the mount; the same layout without the mount reads it."""
    outer = tmp_path / "outer"  # no .git, not the home folder: only the mount stops the search
    (outer / "plain" / "work").mkdir(parents=True)
    (outer / "mnt").mkdir()
    (outer / "neuron-env.toml").write_text('release = "2.34.0"\n')
    if not _can_mount(outer / "mnt"):
        pytest.skip("this machine does not let root mount a tmpfs in a private namespace")
    env = {**healthy.env, "HOME": str(tmp_path / "elsewhere")}
    args = ("doctor", *healthy.host, "--format", "json")

    same_filesystem = json.loads(cli_runner(outer / "plain" / "work")(*args, env=env).stdout)
    across = cli_runner(outer, prefix=_in_a_mount(outer / "mnt"))(*args, env=env)

    assert same_filesystem["config"] == str(outer / "neuron-env.toml")
    assert same_filesystem["release"] == "2.34.0"
    document = json.loads(across.stdout)
    assert document["config"] is None and document["release"] != "2.34.0", across.stderr
