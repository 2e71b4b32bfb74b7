"""Fixtures for the integration tests.

Target environments for the device tests: real venvs, real torch (CPU build), the fake device.

* ``torch_python`` — a venv with ``torch==2.13.0`` and nothing else. It is installed once per test
  session with the machine's pip configuration (which finds the local CPU wheel), or reused from
  ``$NEURON_ENV_TEST_TORCH_VENV`` (scripts/test.sh points it at ``.venv-torch``).
* ``neuron_python`` — a second venv that sees that torch (through a ``.pth`` file) and has the fake
  ``torch-neuronx`` (``tests/fakes/torch-neuronx``) installed as a real wheel with the same
  ``torch.backends`` entry point as the real package, so a plain ``import torch`` loads it.
* ``bare_python`` — a venv without torch.

For the install tests: a test matrix, isolated pip/uv settings, local indexes (``indexes``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_env.probe.os_release import probe_os
from tests.support.aws import MotoServer, reset
from tests.support.cli import REPO, cli_runner
from tests.support.indexes import DATA, Indexes, start_indexes
from tests.support.install_helpers import (
    NeuronEnv,
    StartIndexes,
    isolated_environment,
)

FAKE_NEURONX = REPO / "tests" / "fakes" / "torch-neuronx"
TORCH_PIN = "torch==2.13.0"

# Every torch process the tests start (workers, ranks, the recipes) computes on one thread, as
# torchrun makes its ranks do. The suite runs two test processes on two cores: an OpenMP pool in
# each torch would take both cores and spin-wait on them, 15-30 % of a worker's CPU for nothing
# (the figures compared are the same). A value set outside the suite is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")


def _run(*argv: str | Path, env: dict[str, str] | None = None) -> None:
    subprocess.run([str(a) for a in argv], check=True, env=env, timeout=900)


def _isolated_pip_env() -> dict[str, str]:
    """Installing a local wheel must not depend on this machine's pip configuration."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env["PIP_CONFIG_FILE"] = os.devnull
    return env


def _venv(path: Path, *, pip: bool = True) -> Path:
    _run(sys.executable, "-m", "venv", *([] if pip else ["--without-pip"]), path)
    return path / "bin" / "python"


def _has_torch(python: Path) -> bool:
    """Is torch installed there? Found, not imported: an import costs about 2 s of CPU, per test
    process; a broken torch fails the device tests themselves."""
    code = "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"
    check = subprocess.run([str(python), "-I", "-c", code], capture_output=True, check=False)
    return check.returncode == 0


@pytest.fixture(scope="session")
def torch_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    configured = os.environ.get("NEURON_ENV_TEST_TORCH_VENV")
    venv = Path(configured) if configured else tmp_path_factory.mktemp("torch") / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        _venv(venv)
    if not _has_torch(python):
        # The machine's own pip configuration on purpose: it finds the local CPU wheel.
        _run(python, "-m", "pip", "install", "--quiet", TORCH_PIN)
    return python


@pytest.fixture(scope="session")
def fake_neuronx_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    _run(sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", out, FAKE_NEURONX)
    (wheel,) = out.glob("torch_neuronx-*.whl")
    return wheel


@pytest.fixture(scope="session")
def neuron_python(
    tmp_path_factory: pytest.TempPathFactory, torch_python: Path, fake_neuronx_wheel: Path
) -> Path:
    venv = tmp_path_factory.mktemp("neuron") / "venv"
    python = _venv(venv, pip=False)  # ensurepip alone costs about 5 s of CPU
    (Path(sysconfig.get_path("purelib", vars={"base": str(venv)})) / "_torch.pth").write_text(
        _site_packages(torch_python) + "\n"
    )
    # This suite's pip installs the wheel into that venv, as that venv's own pip would.
    _run(
        sys.executable,
        "-m",
        "pip",
        "--python",
        python,
        "install",
        "--quiet",
        "--no-deps",
        "--no-index",
        fake_neuronx_wheel,
        env=_isolated_pip_env(),
    )
    return python


def _site_packages(python: Path) -> str:
    code = "import sysconfig; print(sysconfig.get_path('purelib'))"
    return subprocess.run(
        [str(python), "-c", code], capture_output=True, text=True, check=True
    ).stdout.strip()


@pytest.fixture(scope="session")
def bare_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _venv(tmp_path_factory.mktemp("bare") / "venv", pip=False)


# --- AWS ---------------------------------------------------------------------------------------


@pytest.fixture
def aws(moto_session: MotoServer) -> MotoServer:
    """moto's server on 127.0.0.1, reset: no resources and no seeded parameters."""
    return reset(moto_session)


# --- install tests ------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def install_matrix_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The test release (Python 3.10-3.14), listing this host's OS so that no --os is needed."""
    text = (DATA / "matrix" / "2.90.0.toml").read_text()
    key = probe_os(Path("/")).key
    if key and key != "ubuntu-26.04":
        text += f'\n[os."{key}"]\nname = "The test host"\nsupport = "supported"\nwheels = true\n'
    directory = tmp_path_factory.mktemp("install-matrix")
    (directory / "2.90.0.toml").write_text(text)
    return directory


@pytest.fixture
def isolated_env(tmp_path: Path, install_matrix_dir: Path) -> dict[str, str]:
    """The machine's pip and uv configuration left out, caches and logs under tmp_path."""
    return isolated_environment(tmp_path, install_matrix_dir)


@pytest.fixture
def neuron_env(tmp_path: Path, isolated_env: dict[str, str]) -> NeuronEnv:
    """Run the real ``neuron-env`` console script with the isolated environment."""
    return cli_runner(tmp_path, base_env=isolated_env, timeout=300)


@pytest.fixture
def indexes(tmp_path: Path) -> Iterator[StartIndexes]:
    """Start the Neuron, PyTorch and default indexes, optionally with one failure mode."""
    started: list[Indexes] = []

    def start(fault: str | None = None, name: str = "indexes") -> Indexes:
        started.append(start_indexes(tmp_path / name, fault))
        return started[-1]

    yield start
    for running in started:
        running.stop()
