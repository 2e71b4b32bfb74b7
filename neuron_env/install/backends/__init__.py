"""Install backends (one module each) and the choice between them."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.install.backends.base import Backend, Session
from neuron_env.install.backends.pip import PipBackend
from neuron_env.install.backends.uv import UvBackend

__all__ = ["Backend", "PipBackend", "Session", "UvBackend", "choose_backend", "find_uv"]

BACKEND_NAMES = ("auto", "uv", "pip")


def find_uv() -> Path | None:
    """uv next to neuron-env's interpreter (installed with it), else on PATH."""
    beside = Path(sys.executable).with_name("uv")
    if beside.is_file():
        return beside
    found = shutil.which("uv")
    return Path(found) if found else None


def choose_backend(name: str) -> Backend:
    """``auto``: uv when it can be found, else pip."""
    if name not in BACKEND_NAMES:
        raise BadInput(f"Unknown backend '{name}'; choose one of {', '.join(BACKEND_NAMES)}.")
    uv = find_uv() if name in ("auto", "uv") else None
    if uv is not None:
        return UvBackend(uv)
    if name == "uv":
        raise BadInput(
            "--backend uv: no uv executable found next to neuron-env or on PATH.",
            hint="Install it with 'pip install uv' (into neuron-env's environment), or use "
            "--backend pip.",
        )
    return PipBackend()
