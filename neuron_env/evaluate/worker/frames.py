"""Where in the user's code something happened: ``file:line``, relative to the working directory.

A frame is the user's when its file is outside this worker, the standard library and installed
packages; failing that, outside this worker, the standard library and torch (their code may be an
installed package); failing that, the deepest frame.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import traceback
from pathlib import Path
from typing import Any

_OURS = str(Path(__file__).resolve().parents[2])  # the neuron_env directory
_STDLIB = {sysconfig.get_path(n) for n in ("stdlib", "platstdlib")}


def _installed() -> set[str]:
    """Where packages are installed: this environment's, and any other on sys.path (a .pth file
    can add another environment's site-packages)."""
    found = {sysconfig.get_path(n) for n in ("purelib", "platlib")}
    found |= {p for p in sys.path if Path(p).name in ("site-packages", "dist-packages")}
    return {os.path.realpath(p) for p in found if p}


def _torch_dir() -> str:
    import torch

    return os.path.realpath(Path(torch.__file__).parent)


def _outside(filename: str, places: set[str]) -> bool:
    if filename.startswith("<"):
        return False
    path = os.path.realpath(filename)
    return not any(path == p or path.startswith(p.rstrip(os.sep) + os.sep) for p in places if p)


def user_location(exc: BaseException) -> str | None:
    """``file:line`` of the deepest frame of ``exc`` in the user's code, if any."""
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return None
    strict = {_OURS, *_STDLIB, *_installed(), _torch_dir()}
    loose = {_OURS, *_STDLIB, _torch_dir()}
    for places in (strict, loose):
        for frame in reversed(frames):
            if _outside(frame.filename, places):
                return shorten(f"{frame.filename}:{frame.lineno}")
    last = frames[-1]
    return shorten(f"{last.filename}:{last.lineno}")


def describe_exception(exc: BaseException) -> str:
    """``Type: message (at file:line)``: the root cause, and where in the user's code it came."""
    from ...worker.target.errors import innermost_message

    at = user_location(exc)
    return f"{type(exc).__name__}: {innermost_message(exc)}" + (f" (at {at})" if at else "")


def where_defined(function: Any) -> str:
    """``file:line`` where ``function`` is defined (or its class, for other callables)."""
    code = getattr(function, "__code__", None)
    if code is None:  # a callable object: where its __call__ is defined
        code = getattr(vars(type(function)).get("__call__"), "__code__", None)
    if code is None:
        return getattr(function, "__qualname__", repr(function))
    return shorten(f"{code.co_filename}:{code.co_firstlineno}")


def shorten(location: str) -> str:
    """Relative to the working directory when it is inside it (shorter, and what users type)."""
    try:
        relative = os.path.relpath(location)
    except ValueError:
        return location
    return location if relative.startswith("..") else relative
