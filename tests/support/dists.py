"""Real virtual environments holding small generated distributions with real names and versions.

A distribution here is what pip leaves behind: a ``<name>-<version>.dist-info`` directory with
METADATA, INSTALLER and RECORD, which ``importlib.metadata`` (and so neuron-env's probe) reads.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

WRONG_PACKAGE = (
    "WRONG PACKAGE. Please install the package from Neuron Repository"
    " - pip.repos.neuron.amazonaws.com"
)


def make_venv(path: Path, python: str = sys.executable) -> Path:
    """A venv without pip (fast); returns its interpreter."""
    subprocess.run([python, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / "bin" / "python"


def site_packages(venv: Path) -> Path:
    (found,) = (venv / "lib").glob("python3.*/site-packages")
    return found


def add_distribution(venv: Path, name: str, version: str, summary: str = "") -> None:
    folder = f"{name.replace('-', '_')}-{version}.dist-info"
    info = site_packages(venv) / folder
    info.mkdir(parents=True)
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n"
    if summary:
        metadata += f"Summary: {summary}\n"
    (info / "METADATA").write_text(metadata)
    (info / "INSTALLER").write_text("pip\n")
    (info / "RECORD").write_text("")
