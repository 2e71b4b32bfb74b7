"""What went wrong in the target, in one line: torch that cannot be imported, an exception's root
cause."""

from __future__ import annotations

import shlex
import sys

from .protocol import Fatal


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
            f"Install it into that environment (e.g. 'neuron-env install --torch 2.14 "
            f"{_where()}'), or pass --python for the interpreter that has torch.",
        ) from None
    except Exception as exc:
        raise Fatal("broken-torch", f"import torch failed: {type(exc).__name__}: {exc}") from None


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
