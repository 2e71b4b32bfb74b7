"""Finding a Python the pairing supports, to create a new environment with.

A host often has the right Python outside PATH: pyenv keeps its versions under
``$PYENV_ROOT/versions`` (its shims fail for a version that is not selected), uv keeps its managed
Pythons under its data directory. When none is found, the hint says how to get one on this OS,
never a command that the host cannot run.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.home import home


def find_interpreter(allowed: Sequence[str], os_key: str | None = None) -> Path:
    """The first interpreter of an ``allowed`` minor on PATH, in pyenv, or among uv's."""
    from neuron_env.install.target_env import python_version

    for candidate in _candidates(allowed):
        try:
            version = python_version(candidate)
        except BadInput:
            continue  # a shim for a version that is not installed, a broken link
        if ".".join(version.split(".")[:2]) in allowed:
            return candidate
    raise BadInput(
        f"No Python {', '.join(allowed)} found (on PATH, in pyenv or among uv's Pythons) to "
        "create the environment with.",
        hint=how_to_get(allowed[0], os_key),
    )


def _candidates(allowed: Sequence[str]) -> Iterator[Path]:
    for name in ["python3", *(f"python{v}" for v in allowed)]:
        found = shutil.which(name)
        if found is not None:
            yield Path(found)
    folder = home()  # none (a container's arbitrary uid): only the roots the environment names
    pyenv = os.environ.get("PYENV_ROOT") or (folder and folder / ".pyenv")
    uv_default = folder and folder / ".local" / "share" / "uv" / "python"
    uv_pythons = os.environ.get("UV_PYTHON_INSTALL_DIR") or uv_default
    roots = [Path(pyenv) / "versions"] if pyenv else []
    roots += [Path(uv_pythons)] if uv_pythons else []
    for root in roots:
        for minor in allowed:
            try:
                found_here = sorted(root.glob(f"*/bin/python{minor}"), reverse=True)
            except OSError:  # another user's pyenv (PYENV_ROOT kept by sudo): not this user's
                break
            yield from found_here


def how_to_get(minor: str, os_key: str | None) -> str:
    """A way to get Python ``minor`` that works on this host, then the same install again."""
    if shutil.which("uv"):
        return f"Install one with 'uv python install {minor}', then run the same command again."
    if os_key == "ubuntu-24.04" and minor == "3.12":
        return "Install it with 'sudo apt-get install -y python3.12 python3.12-venv'."
    if os_key and os_key.startswith("ubuntu-"):
        return (
            f"Install it from the deadsnakes archive: 'sudo add-apt-repository -y "
            f"ppa:deadsnakes/ppa && sudo apt-get install -y python{minor} python{minor}-venv'."
        )
    if os_key == "amzn-2023":
        return f"Install it with 'sudo dnf install -y python{minor}'."
    return (
        f"Pass one with --python PATH, or use a Neuron DLAMI (Ubuntu 24.04 or 26.04), which "
        f"comes with a Python {minor} or newer."
    )
