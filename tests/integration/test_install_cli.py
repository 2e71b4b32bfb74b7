"""Bad input to ``install`` and ``download`` exits 2 with one paragraph and the next step."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, REPO
from tests.support.install_helpers import NeuronEnv, flat, python_here
from tests.support.pasted import in_fresh_shell

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--torch", "2.14"], "No target environment: give --venv DIR"),
        (["--venv", "env"], "Which PyTorch? Give --torch X.Y"),
        (["--torch", "2.14", "--venv", "env", "--offline"], "--offline installs from a wheelhouse"),
        (["--torch", "2.14", "--execute"], "--execute runs the apt steps of --system"),
        (["--system", "--venv", "env"], "it does not take --venv"),
        (["--torch", "2.14", "--venv", "env", "--backend", "conda"], "Unknown backend 'conda'"),
        (
            ["--torch", "2.14", "--venv", "env", "--neuron-index", "pip.example"],
            "is not an index URL",
        ),
        (
            ["--torch", "2.12", "--venv", "env"],
            "pairs torch-neuronx with PyTorch 2.13 and 2.14 only",
        ),
    ],
)
def test_bad_input_exits_2(neuron_env: NeuronEnv, args: list[str], message: str) -> None:
    result = neuron_env("install", *args)
    assert result.returncode == 2, result.stderr
    assert message in flat(result.stderr)
    assert "Traceback" not in result.stderr


def test_a_python_outside_any_venv_is_refused(neuron_env: NeuronEnv) -> None:
    base = str(Path(sys.executable).resolve())  # the interpreter behind the tests' venv
    result = neuron_env("install", "--torch", "2.14", "--python", base)
    assert result.returncode == 2
    assert "is not inside a virtual environment" in flat(result.stderr)


def test_an_existing_directory_that_is_not_a_venv_is_left_alone(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    target = tmp_path / "project"
    target.mkdir()
    (target / "notes.txt").write_text("mine")
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(target), "--python", python_here()
    )
    assert result.returncode == 2
    assert "exists and is not a virtual environment; neuron-env will not replace it" in flat(
        result.stderr
    )
    assert (target / "notes.txt").read_text() == "mine"


def test_a_python_the_release_does_not_support_is_refused_with_the_supported_ones(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(tmp_path / "env"), "--python", python_here(),
        env={"NEURON_ENV_MATRIX_DIR": ""},  # the shipped releases only: Python 3.12-3.14
    )  # fmt: skip
    assert result.returncode == 2
    assert "supports Python 3.12–3.14, not 3.11" in flat(result.stderr)


def test_an_environment_with_another_python_is_told_what_to_create_first(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    venv = tmp_path / ".venv"  # the quick start's environment: Python 3.11
    subprocess.run([python_here(), "-m", "venv", "--without-pip", str(venv)], check=True)
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(venv), "--dry-run",
        env={"NEURON_ENV_MATRIX_DIR": ""},  # the shipped releases only: Python 3.12-3.14
    )  # fmt: skip
    assert result.returncode == 2
    message = flat(result.stderr)
    assert "supports Python 3.12–3.14, not 3.11" in message
    # install creates the new environment itself: no interpreter the host may lack is named
    assert "install --torch 2.14 --venv .venv-neuron --python-version 3.12" in message
    assert "python3.12 -m venv" not in message


def test_neuron_envs_own_environment_is_never_a_target(neuron_env: NeuronEnv) -> None:
    for args in (["--venv", sys.prefix], ["--python", sys.executable]):
        result = neuron_env("install", "--torch", "2.14", *args, "--dry-run")
        assert result.returncode == 2, result.stdout
        assert "is the environment neuron-env itself runs in" in flat(result.stderr)


def test_an_os_the_release_does_not_list_is_refused(neuron_env: NeuronEnv, tmp_path: Path) -> None:
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(tmp_path / "env"), "--python", python_here(),
        "--os", "fedora-41", "--dry-run",
    )  # fmt: skip
    assert result.returncode == 2
    assert "does not list OS 'fedora-41'" in flat(result.stderr)


def test_download_needs_an_empty_directory(neuron_env: NeuronEnv, tmp_path: Path) -> None:
    dest = tmp_path / "wheels"
    dest.mkdir()
    (dest / "keep.txt").write_text("mine")
    result = neuron_env("download", "--torch", "2.14", "-d", str(dest))
    assert result.returncode == 2
    assert "is not an empty directory" in flat(result.stderr)
    assert (dest / "keep.txt").read_text() == "mine"


def test_help_shows_examples(neuron_env: NeuronEnv) -> None:
    for command in ("install", "download"):
        result = neuron_env(command, "--help")
        assert result.returncode == 0
        assert f"neuron-env {command} --torch 2.14" in result.stdout


def _host_without_a_supported_python(tmp_path: Path) -> dict[str, str]:
    """Only the system's directories on PATH (Python 3.11 here), no pyenv, no uv Pythons, and
    the shipped releases only (Python 3.12-3.14)."""
    return {
        "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        "HOME": str(tmp_path / "home"),
        "PYENV_ROOT": str(tmp_path / "no-pyenv"),
        "UV_PYTHON_INSTALL_DIR": str(tmp_path / "no-uv"),
        "NEURON_ENV_MATRIX_DIR": "",
    }


def test_errors_in_the_order_a_user_fixes_them_unsupported_torch_before_missing_python(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    result = neuron_env(
        "install", "--torch", "2.15", "--venv", str(tmp_path / "env"), "--os", "ubuntu-24.04",
        "--dry-run", env=_host_without_a_supported_python(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    assert "not 2.15" in flat(result.stderr)
    assert "No Python" not in result.stderr


def test_export_and_download_need_no_python_found_to_create_env(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    env = _host_without_a_supported_python(tmp_path)
    export = neuron_env(
        "install", "--torch", "2.14", "--export", str(tmp_path / "req.txt"),
        "--os", "ubuntu-26.04", "--dry-run", env=env,
    )  # fmt: skip
    download = neuron_env(
        "download", "--torch", "2.14", "-d", str(tmp_path / "wheels"), "--os", "ubuntu-26.04",
        "--dry-run", env=env,
    )  # fmt: skip
    for result in (export, download):
        assert result.returncode == 0, result.stderr
        assert "No Python" not in result.stderr
        assert "Python 3.12" in result.stdout  # the pairing's first Python


def test_install_without_a_supported_python_says_how_to_get_one_on_this_os(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(tmp_path / "env"), "--os", "ubuntu-26.04",
        "--dry-run", env=_host_without_a_supported_python(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    message = flat(result.stderr)
    assert "No Python 3.12, 3.13, 3.14 found (on PATH, in pyenv or among uv's Pythons)" in message
    assert "python3.12 -m venv" not in message


def test_unconfirmed_pins_are_one_line_per_release(neuron_env: NeuronEnv, tmp_path: Path) -> None:
    common = ["--torch", "2.13", "--release", "2.34.0", "--os", "ubuntu-26.04", "--dry-run"]
    install = neuron_env("install", *common, "--venv", str(tmp_path / "env"))
    download = neuron_env("download", *common, "-d", str(tmp_path / "wheels"))
    for result in (install, download):
        assert result.returncode == 0, result.stderr
        said = flat(result.stdout + result.stderr)
        for pin in ("torch==2.13.0", "torch-neuronx==2.13.3.1.*", "neuronx-cc==2.*", "nki==0.8.0"):
            assert f"{pin} is unconfirmed" not in said  # no longer one warning per pin
        line = f"2.34.0: 4 pins unconfirmed — see '{NEURON_ENV} matrix show --release 2.34.0'"
        assert said.count(line) == 1, said


@pytest.mark.parametrize(
    "command",
    [
        ("install", "--venv", "env", "--dry-run"),
        ("install", "--export", "req.txt", "--dry-run"),
        ("download", "-d", "wheels", "--dry-run"),
        ("image", "render", "--neuron-env-source", "pypi", "-o", "Dockerfile"),
    ],
)
def test_one_os_truth_every_command_refuses_an_os_the_matrix_gives_no_wheels(
    neuron_env: NeuronEnv, tmp_path: Path, command: tuple[str, ...]
) -> None:
    """install --os ubuntu-24.04 exited 0 while image render --os ubuntu-24.04 refused."""
    args = [str(tmp_path / a) if a in ("env", "req.txt", "wheels", "Dockerfile") else a
            for a in command]  # fmt: skip
    result = neuron_env(*args, "--torch", "2.14", "--os", "ubuntu-24.04",
                        env=_host_without_a_supported_python(tmp_path))  # fmt: skip
    assert result.returncode == 2, result.stdout + result.stderr
    said = flat(result.stderr)
    assert "Neuron 2.34.0 publishes no torch-neuronx pip wheels for Ubuntu 24.04 LTS, so" in said
    assert "Pick an OS with wheels: --os ubuntu-26.04." in said
    assert "No Python" not in said  # the request is refused before any interpreter is sought
    assert not list(tmp_path.glob("env*")) and not list(tmp_path.glob("[rwD]*"))  # nothing made


def test_a_venv_in_a_missing_folder_with_a_space_gets_a_mkdir_that_pastes(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    """The hint was 'mkdir -p /tmp/x/with space': pasted, it made /tmp/x/with and ./space."""
    folder = tmp_path / "with space" / "envs"
    result = neuron_env("install", "--torch", "2.14", "--venv", str(folder / "v"),
                        "--python", python_here())  # fmt: skip
    assert result.returncode == 2
    hint = result.stderr.strip().splitlines()[-1]
    assert hint.startswith("Create it first: mkdir -p ")
    pasted = in_fresh_shell(hint.removeprefix("Create it first: "), tmp_path)
    assert pasted.returncode == 0, pasted.stderr
    assert folder.is_dir() and sorted(p.name for p in tmp_path.iterdir()) == ["with space"]


def test_a_venv_under_a_file_says_the_file_is_in_the_way(
    neuron_env: NeuronEnv, tmp_path: Path
) -> None:
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    result = neuron_env("install", "--torch", "2.14", "--venv", str(blocker / "sub" / "v"),
                        "--python", python_here())  # fmt: skip
    assert result.returncode == 2
    assert f"{blocker} is a file, not a folder" in flat(result.stderr)
    assert "mkdir" not in result.stderr and blocker.read_text() == "mine"


def test_a_python_2_base_is_told_it_is_too_old(neuron_env: NeuronEnv, tmp_path: Path) -> None:
    """A system ``python`` of 2.7 as --python: it said "Cannot run Python interpreter ... failed
    with exit code 2" (2.7 has no -I); it is a Python, only too old for the release."""
    python2 = REPO / "tests" / "fakes" / "old_python" / "python2.7"  # as pyenv's 2.7.18 answers
    result = neuron_env("install", "--torch", "2.14", "--venv", str(tmp_path / "v"),
                        "--python", str(python2), "--dry-run")  # fmt: skip
    assert result.returncode == 2
    said = flat(result.stderr)
    assert re.search(r"supports Python 3\.\d+–3\.\d+, not 2\.7\.", said), said
    assert "Create it with a supported Python:" in said and "Cannot run" not in said
