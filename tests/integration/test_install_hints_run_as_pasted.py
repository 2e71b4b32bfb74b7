"""The commands that install's, download's and doctor's refusals print run as pasted.

Each test provokes one refusal through the real console script, takes the command quoted in its
hint, and runs it with ``bash -c`` in a shell like a new terminal's (``PATH`` holds only the
system's directories, as in :mod:`tests.integration.test_fixes_run_as_pasted`), with
``--dry-run`` where it would change the host. The command must name neuron-env by a path a fresh
shell finds (never bare, never a placeholder such as ``X.Y``) and carry the exact flags of the
refused run (the release, the PyTorch, the file), so that it runs: never exit 127.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV
from tests.support.indexes import DATA
from tests.support.install_helpers import NeuronEnv, flat
from tests.support.pasted import (
    PLACEHOLDERS,
    assert_runs,
    quoted_command,
    run_pasted,
    shipped,
)

pytestmark = pytest.mark.integration

QUOTED_ANY = re.compile(r"'([^']+)'")
NEW_VENV = ".venv-neuron"  # the folder doctor looks for
RELEASE = "2.90.0"  # the install tests' release (install_matrix_dir)


def test_install_without_a_target_prints_an_install_that_runs(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    result = neuron_env("install", "--torch", "2.14", "--dry-run")
    assert result.returncode == 2, result.stderr
    words = quoted_or_after(result.stderr, "For example: ")
    assert words[1:] == ["install", "--torch", "2.14", "--release", RELEASE, "--venv", NEW_VENV]
    assert_runs(run_pasted(words, isolated_env, tmp_path, "--dry-run"))


def test_a_python_outside_a_venv_gets_an_install_with_that_python(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    python = "/usr/bin/python3"
    result = neuron_env("install", "--torch", "2.14", "--python", python, "--dry-run")
    assert result.returncode == 2, result.stderr
    words = quoted_or_after(result.stderr, "Create one with: ")
    assert words[-4:] == ["--venv", ".venv-neuron", "--python", python]
    assert words[2:6] == ["--torch", "2.14", "--release", RELEASE]
    # The host's python3 may be one the test release does not pair: then install says so,
    # which is an answer, not a command that was not found.
    done = run_pasted(words, isolated_env, tmp_path, "--dry-run")
    assert done.returncode in (0, 2) and "command not found" not in done.stderr, done.stderr


def test_offline_without_a_wheelhouse_prints_the_download_that_fills_one(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    args = ["install", "--torch", "2.14", "--venv", "env", "--offline", "--dry-run"]
    result = neuron_env(*args)
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "download")
    assert words[1:] == ["download", "--torch", "2.14", "--release", RELEASE, "-d", "DIR"]
    assert "with a new folder in place of DIR" in flat(result.stderr)
    assert_runs(run_pasted(words, isolated_env, tmp_path, "--dry-run"))


def test_an_empty_wheelhouse_prints_the_download_into_it(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    house = tmp_path / "house"
    house.mkdir()
    args = ["install", "--torch", "2.14", "--venv", "env", "--wheelhouse", str(house)]
    result = neuron_env(*args, "--dry-run")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "download")
    assert words[1:4] == ["download", "--torch", "2.14.0"] and words[-2:] == ["-d", str(house)]
    assert words[4:6] == ["--release", RELEASE]
    assert_runs(run_pasted(words, isolated_env, tmp_path, "--dry-run"))


def test_a_malformed_lock_prints_the_export_that_writes_it_again(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    lock = tmp_path / "lock.txt"
    lock.write_text("six==1.16.0 --hash=sha256:nothex\n")
    result = neuron_env("install", "--torch", "2.14", "--venv", "env", "-r", str(lock))
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "install")
    assert words[1:] == ["install", "--torch", "2.14", "--export", str(lock)]
    assert_runs(run_pasted(words, isolated_env, tmp_path, "--dry-run"))


def test_system_steps_for_a_non_ubuntu_host_print_a_command_that_prints_them(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    sysroot = DATA / "hosts" / "debian-12"
    result = neuron_env("install", "--system", "--release", "2.34.0", "--sysroot", str(sysroot))
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "install")
    assert words[1:6] == ["install", "--system", "--release", "2.34.0", "--os"]
    assert words[6].startswith("ubuntu-")
    assert_runs(run_pasted(words, shipped(isolated_env), tmp_path, "--sysroot", str(sysroot)))


def test_execute_without_root_names_neuron_env_by_its_path_for_sudo(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    # A user namespace without a uid mapping: the process runs as "nobody".
    ubuntu = DATA / "hosts" / "ubuntu-24.04"
    argv = ["unshare", "--user", str(NEURON_ENV), "install", "--system", "--release", "2.34.0"]
    argv += ["--execute", "--yes", "--sysroot", str(ubuntu)]
    env = shipped(isolated_env)
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    # sudo's secure_path never holds a venv's bin: the path, with the same release.
    expected = f"sudo {NEURON_ENV} install --system --release 2.34.0 --execute"
    assert expected in flat(proc.stderr)


def test_the_unconfirmed_pins_note_names_a_matrix_show_that_runs(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    env = {"NEURON_ENV_MATRIX_DIR": None}  # the shipped matrix, whose 2.34.0 has unconfirmed pins
    args = ["install", "--torch", "2.14", "--release", "2.34.0", "--os", "ubuntu-26.04"]
    result = neuron_env(*args, "--venv", str(tmp_path / "env"), "--dry-run", env=env)
    assert result.returncode == 0, result.stderr
    words = quoted_command(result.stdout + result.stderr, "matrix")
    assert words[1:] == ["matrix", "show", "--release", "2.34.0"]
    assert_runs(run_pasted(words, shipped(isolated_env), tmp_path))


def test_uv_without_pip_names_the_new_venvs_own_python(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    venv = tmp_path / "env"
    result = neuron_env("install", "--torch", "2.14", "--venv", str(venv), "--dry-run")
    assert result.returncode == 0, result.stderr
    said = flat(result.stdout + result.stderr)
    if "uv creates the venv without pip" not in said:
        pytest.fail(f"install did not plan with uv here: {said}")
    assert f"'{venv}/bin/python -m ensurepip'" in said


def test_an_unknown_check_id_prints_a_list_checks_that_runs(
    neuron_env: NeuronEnv, isolated_env: dict[str, str], tmp_path: Path
) -> None:
    result = neuron_env("doctor", "--check", "no.such-check")
    assert result.returncode == 2, result.stderr
    words = quoted_command(result.stderr, "doctor")
    assert words[1:] == ["doctor", "--list-checks"]
    assert_runs(run_pasted(words, isolated_env, tmp_path))


def quoted_or_after(text: str, prefix: str) -> list[str]:
    """The command that follows ``prefix`` on its line (a hint that ends in a command)."""
    line = next(line for line in text.splitlines() if prefix in line)
    words = shlex.split(line.split(prefix, 1)[1])
    assert words[0] == str(NEURON_ENV), f"neuron-env is not named by its path: {words}"
    assert not PLACEHOLDERS.search(" ".join(words)), words
    return words


def test_an_unmatched_selftest_case_prints_a_list_that_runs(
    isolated_env: dict[str, str], tmp_path: Path
) -> None:
    from neuron_env.errors import BadInput
    from neuron_env.selftest import select_variants

    with pytest.raises(BadInput) as caught:
        select_variants("long", ["no-such-case*"])
    # In this process neuron-env was not started from its script: PYTHON -m neuron_env.
    words = shlex.split(QUOTED_ANY.findall(caught.value.hint or "")[0])
    assert words[:3] == [sys.executable, "-m", "neuron_env"] and words[3:] == ["selftest", "--list"]
    assert_runs(run_pasted(words, isolated_env, tmp_path))
