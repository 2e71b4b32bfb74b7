"""What went wrong in the target, in one line: torch that cannot be imported, an exception's root
cause."""

from __future__ import annotations

import importlib.metadata
import shlex
import sys
from pathlib import Path

from .protocol import Fatal

NEW_ENVIRONMENT = ".venv-neuron"  # the folder doctor's next step creates, and then looks for


def require_torch() -> None:
    """Import torch, or raise :class:`Fatal` saying why it cannot be (also used by evaluate)."""
    try:
        import torch  # noqa: F401
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise Fatal("broken-torch", f"import torch failed: {exc}") from None
        raise Fatal(
            "no-torch",
            f"torch is not installed in {sys.executable} (Python {sys.version.split()[0]}).",
            _own_environment_hint() if _is_own_environment() else _install_hint(),
        ) from None
    except Exception as exc:
        raise Fatal("broken-torch", f"import torch failed: {type(exc).__name__}: {exc}") from None


def _install_hint() -> str:
    return (
        f"Install it into that environment (e.g. 'neuron-env install --torch 2.14 {_where()}'), "
        "or pass --python for the interpreter that has torch."
    )


def _is_own_environment() -> bool:
    """The target is the environment neuron-env itself runs in (the quick start's venv), which
    'neuron-env install' refuses to write into: it would replace the running tool."""
    try:
        importlib.metadata.distribution("neuron-env")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def _own_environment_hint() -> str:
    """A separate environment (where the printed command runs, as doctor's next step names
    it), then the same command pointed at it."""
    new = Path.cwd() / NEW_ENVIRONMENT
    venv, python = shlex.quote(str(new)), shlex.quote(str(new / "bin" / "python"))
    return (
        "This is neuron-env's own environment, which install does not write into. Create a "
        f"TorchNeuron one with 'neuron-env install --torch 2.14 --venv {venv}', then run this "
        f"command again with --python {python}."
    )


def _where() -> str:
    """The install flags that name this environment: its own folder when it is a virtual one;
    else a new one made from this interpreter (install never writes into a system Python)."""
    if sys.prefix != sys.base_prefix:
        return f"--venv {shlex.quote(sys.prefix)}"
    return f"--venv .venv-neuron --python {shlex.quote(sys.executable)}"


def innermost_message(exc: BaseException) -> str:
    """The first line of the root cause: dynamo wraps a backend's error in its own."""
    while True:
        inner = getattr(exc, "inner_exception", None) or exc.__cause__
        if inner is None or inner is exc:
            break
        exc = inner
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__
