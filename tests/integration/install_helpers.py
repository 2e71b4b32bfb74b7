"""Helpers for the install tests: run an install, fingerprint an environment, find leftovers."""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from tests.conftest import NEURON_ENV, Result
from tests.integration.conftest import NeuronEnv, python_here


def install(
    neuron_env: NeuronEnv, venv: Path, urls: list[str], *extra: str, torch: str = "2.14"
) -> Result:
    """``neuron-env install`` into ``venv``, created from the interpreter running the tests."""
    return neuron_env(
        "install", "--torch", torch, "--venv", str(venv), "--python", python_here(), *urls, *extra
    )


def start_install(
    env: dict[str, str], venv: Path, urls: list[str], *extra: str, torch: str = "2.14"
) -> subprocess.Popen[str]:
    """The same install in the background, for tests that interrupt it."""
    argv = [str(NEURON_ENV), "install", "--torch", torch, "--venv", str(venv)]
    argv += ["--python", python_here(), *urls, *extra]
    return subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def fingerprint(venv: Path) -> dict[str, str]:
    """Every file and link under ``venv`` with its content hash or link target."""
    found = {}
    for root, dirs, files in os.walk(venv):
        for name in sorted(dirs + files):
            path = Path(root) / name
            rel = str(path.relative_to(venv))
            if path.is_symlink():
                found[rel] = "-> " + os.readlink(path)
            elif path.is_file():
                found[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return found


def leftovers(parent: Path) -> list[str]:
    """Staging directories (or anything else neuron-env names) left beside the target."""
    return sorted(p.name for p in parent.iterdir() if "neuron-env" in p.name)


def run_in(venv: Path, program: str, *args: str) -> str:
    return subprocess.run(
        [str(venv / "bin" / program), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def flat(text: str) -> str:
    """``text`` with its line wrapping undone, for matching sentences of wrapped messages."""
    return " ".join(text.split())
