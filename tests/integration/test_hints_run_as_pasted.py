"""The commands that scan's, fleet's, evaluate's, facts', project defaults' and install's user
package refusals print run as pasted into a fresh shell.

As in :mod:`tests.integration.test_install_hints_run_as_pasted`: each test provokes one refusal
through the real console script, takes the command its hint quotes (neuron-env named by its
path, never bare, no ``FILE`` or ``X.Y`` placeholder) and runs it with ``bash -c`` under the
system's PATH in another empty folder, with ``--dry-run`` where it would change the host. It must
never exit 127, and it exits as the refused run's next step would.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV
from tests.support.hosts import build_target, load_scenario
from tests.support.install_helpers import NeuronEnv, flat
from tests.support.pasted import (
    assert_runs,
    elsewhere,
    quoted_command,
    run_pasted,
    shipped,
)

pytestmark = pytest.mark.integration


def test_an_unreadable_snapshot_prints_a_facts_command_that_writes_one(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "host.json").write_text('{"schema": "neuron-env/other/v1"}')
    result = neuron_env("doctor", "--facts", "host.json")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "facts")
    assert words[1:] == ["facts", "-o", "host.json"]
    assert_runs(run_pasted(words, isolated_env, elsewhere(tmp_path)))
    assert (elsewhere(tmp_path) / "host.json").is_file()


def test_scan_dry_run_without_fix_prints_the_preview_of_the_same_files(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "train.py").write_text("import torch\n")
    result = neuron_env("scan", "train.py", "--dry-run")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "scan")
    assert words[1:] == ["scan", str(tmp_path / "train.py"), "--fix", "--dry-run"]
    assert_runs(run_pasted(words, isolated_env, elsewhere(tmp_path)))


def test_an_empty_fleet_folder_prints_a_collect_into_that_folder(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "snapshots").mkdir()
    result = neuron_env("fleet", "report", "snapshots")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "fleet")
    assert words[1:] == ["fleet", "collect", "-o", str(tmp_path / "snapshots")]
    assert "neuron-env facts" not in flat(result.stderr)  # another host's command is not bare
    # Run as pasted it reaches collect's own question, which instances (before any AWS call).
    aws = {"AWS_REGION": "us-east-1", "AWS_CONFIG_FILE": "/dev/null"}
    done = run_pasted(words, {**isolated_env, **aws}, elsewhere(tmp_path))
    assert done.returncode == 2 and "Name the instances: --targets" in done.stderr, done.stderr


def test_a_malformed_evaluate_entry_prints_an_example_that_runs(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    result = neuron_env("evaluate", "model")
    assert result.returncode == 2, result.stderr
    example = flat(result.stderr).split("For example: ", 1)[1].split(", or ", 1)[0]
    words = shlex.split(example)
    assert words == [str(NEURON_ENV), "evaluate", "my_model.py:make"]
    # The example's file is the user's to write: here it is missing, which evaluate says.
    done = run_pasted(words, isolated_env, elsewhere(tmp_path))
    assert done.returncode == 2 and "my_model.py does not exist" in done.stderr, done.stderr


def test_an_unknown_allowed_check_in_project_defaults_prints_the_list_of_checks(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "neuron-env.toml").write_text('allow = {"env.cachex" = "scratch disk"}\n')
    result = neuron_env("doctor")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "doctor")
    assert words[1:] == ["doctor", "--list-checks"]
    assert_runs(run_pasted(words, isolated_env, elsewhere(tmp_path)))


def test_a_version_the_release_excludes_prints_the_matrix_list(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    result = neuron_env("install", "--torch", "2.14", "--venv", "env", "--dry-run", "torch>=2.15")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "matrix")
    assert words[1:] == ["matrix", "list"]
    assert_runs(run_pasted(words, isolated_env, elsewhere(tmp_path)))


def test_a_companion_no_release_ships_prints_the_release_it_would_have_come_from(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    args = ["install", "--torch", "2.14", "--os", "ubuntu-26.04", "--venv", "env", "--dry-run"]
    result = neuron_env(*args, "nkipy", env={"NEURON_ENV_MATRIX_DIR": None})
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "matrix")
    assert words[1:] == ["matrix", "show", "--release", "2.34.0"]
    assert_runs(run_pasted(words, shipped(isolated_env), elsewhere(tmp_path)))


def test_an_export_from_a_wheelhouse_without_manifest_prints_the_download_that_fills_one(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    house = tmp_path / "house"
    house.mkdir()
    (house / "stray-1.0-py3-none-any.whl").write_bytes(b"")
    args = ["install", "--torch", "2.14", "--export", "lock.txt", "--wheelhouse", str(house)]
    result = neuron_env(*args)
    assert result.returncode == 2, result.stderr
    assert "has no neuron-env manifest" in flat(result.stderr)
    words = quoted_command(result.stderr, "download")
    assert words[1:4] == ["download", "--torch", "2.14.0"] and words[-2:] == ["-d", "DIR"]
    assert_runs(run_pasted(words, isolated_env, elsewhere(tmp_path), "--dry-run"))
    assert not (tmp_path / "lock.txt").exists()


@pytest.mark.parametrize(
    "command", [("smoke",), ("selftest",), ("evaluate", "my_model.py:make")], ids=lambda c: c[0]
)
def test_a_device_command_on_neuron_envs_own_environment_prints_an_install_elsewhere_that_runs(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path, command: tuple[str, ...]
) -> None:
    """install refuses neuron-env's own environment: the hint creates a separate one (an
    install that runs as pasted), then names the --python that points the command at it."""
    own = build_target(load_scenario("neuron-env-own-environment"), tmp_path / "own")
    if command[0] == "evaluate":
        (tmp_path / "my_model.py").write_text(MODEL)
    result = neuron_env(*command, "--python", str(own))
    assert result.returncode != 0, result.stdout
    said = flat(result.stdout + result.stderr)
    assert "This is neuron-env's own environment, which install does not write into." in said
    new = tmp_path / ".venv-neuron"
    words = quoted_command(said, "install")
    assert words[1:] == ["install", "--torch", "2.14", "--venv", str(new)]
    assert f"then run this command again with --python {new / 'bin' / 'python'}." in said
    done = run_pasted(words, isolated_env, elsewhere(tmp_path), "--dry-run")
    assert_runs(done)
    assert "Dry run: nothing was changed." in done.stdout


MODEL = """\
import torch


def make():
    return torch.nn.Linear(2, 2), (torch.ones(1, 2),)
"""
