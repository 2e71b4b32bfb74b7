"""Target environments for the device tests: real venvs, real torch (CPU build), the fake device.

* ``torch_python`` — a venv with ``torch==2.13.0`` and nothing else. It is installed once per test
  session with the machine's pip configuration (which finds the local CPU wheel), or reused from
  ``$NEURON_ENV_TEST_TORCH_VENV`` (scripts/test.sh points it at ``.venv-torch``).
* ``neuron_python`` — a second venv that sees that torch (through a ``.pth`` file) and has the fake
  ``torch-neuronx`` (``tests/fakes/torch-neuronx``) installed as a real wheel with the same
  ``torch.backends`` entry point as the real package, so a plain ``import torch`` loads it.
* ``bare_python`` — a venv without torch.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.conftest import REPO

FAKE_NEURONX = REPO / "tests" / "fakes" / "torch-neuronx"
TORCH_PIN = "torch==2.13.0"


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
    check = subprocess.run([str(python), "-c", "import torch"], capture_output=True, check=False)
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
    python = _venv(venv)
    (Path(sysconfig.get_path("purelib", vars={"base": str(venv)})) / "_torch.pth").write_text(
        _site_packages(torch_python) + "\n"
    )
    _run(
        python,
        "-m",
        "pip",
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
