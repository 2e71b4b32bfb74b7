"""Install backends (one module each) and the choice between them."""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from packaging.version import InvalidVersion, Version

from neuron_env.command import clean_env, run
from neuron_env.errors import BadInput, CommandFailed
from neuron_env.install.backends.base import Backend, Session
from neuron_env.install.backends.pip import PipBackend
from neuron_env.install.backends.uv import UvBackend

__all__ = ["Backend", "PipBackend", "Session", "UvBackend", "choose_backend", "find_uv"]

BACKEND_NAMES = ("auto", "uv", "pip")
#: The first uv that writes and installs pylock.toml (PEP 751) files.
MIN_UV = Version("0.6.15")


def find_uv() -> Path | None:
    """uv next to neuron-env's interpreter (installed with it), else on PATH."""
    beside = Path(sys.executable).with_name("uv")
    if beside.is_file():
        return beside
    found = shutil.which("uv")
    return Path(found) if found else None


def uv_version(uv: Path) -> Version | None:
    """The version ``uv --version`` reports, or None when it cannot tell."""
    try:
        out = run([uv, "--version"], timeout=30, env=clean_env()).stdout.split()
        return Version(out[1])
    except (CommandFailed, IndexError, InvalidVersion):
        return None


def choose_backend(name: str, find: Callable[[], Path | None] = find_uv) -> Backend:
    """``auto``: uv when it can be found and is new enough, else pip."""
    if name not in BACKEND_NAMES:
        raise BadInput(f"Unknown backend '{name}'; choose one of {', '.join(BACKEND_NAMES)}.")
    uv = find() if name in ("auto", "uv") else None
    if uv is not None:
        version = uv_version(uv)
        if version is not None and version >= MIN_UV:
            return UvBackend(uv)
        if name == "uv":
            raise BadInput(
                f"--backend uv: {uv} is uv {version or '(unknown version)'}; neuron-env needs uv "
                f"{MIN_UV} or newer (it installs from a pylock.toml).",
                hint="Upgrade it ('pip install -U uv'), or use --backend pip.",
            )
    if name == "uv":
        raise BadInput(
            "--backend uv: no uv executable found next to neuron-env or on PATH.",
            hint="Install it with 'pip install uv' (into neuron-env's environment), or use "
            "--backend pip.",
        )
    return PipBackend()
