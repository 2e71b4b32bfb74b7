"""The target Python environment: which interpreter, and what it has installed.

The facts come from running ``_python_probe.py`` (standard library only) inside the target
interpreter, so neuron-env can inspect an environment that lacks its own dependencies.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from neuron_env.command import run
from neuron_env.errors import BadInput, CommandFailed, OperationFailed
from neuron_env.facts import PythonFacts, below_probe_floor
from neuron_env.interpreter import version_of
from neuron_env.invocation import command
from neuron_env.schema import JSON_LENIENT, SchemaError, parse

PROBE_SCRIPT = Path(__file__).with_name("_python_probe.py")
DEFAULT_VENV = ".venv-neuron"
"""The environment printed fixes create; judged by default when it is in the working directory."""


OWN_ENVIRONMENT = "neuron-env's own environment"
"""How a target was chosen when nothing else named one: the interpreter neuron-env runs in."""


def find_target_python(python: Path | None = None, venv: Path | None = None) -> Path:
    """The interpreter to inspect: ``--python``, else ``--venv``, else the active virtualenv,
    else a ``.venv-neuron`` in the working directory (where the printed install command creates
    one), else the interpreter neuron-env runs in."""
    return choose_target_python(python, venv)[0]


def choose_target_python(python: Path | None = None, venv: Path | None = None) -> tuple[Path, str]:
    """:func:`find_target_python`'s interpreter and how it was chosen: ``--python``, ``--venv``,
    ``$VIRTUAL_ENV``, ``./.venv-neuron`` or :data:`OWN_ENVIRONMENT`."""
    if python is not None and venv is not None:
        raise BadInput("Give either --python or --venv, not both.")
    if venv is not None:
        candidate = venv / "bin" / "python"
        if interpreter_gone(candidate):
            raise python_gone(candidate, f"--venv {venv}")
        if not candidate.exists():
            raise BadInput(
                f"{venv} is not a virtual environment (no bin/python).",
                hint="Create it with: "
                + command("install", "--torch", "2.14", "--venv", str(venv))
                + " (or pass --python PATH).",
            )
        return candidate, "--venv"
    if python is not None:
        if interpreter_gone(python):
            raise python_gone(python, f"--python {python}")
        if not python.exists():
            raise BadInput(f"Python interpreter {python} does not exist.")
        if python.is_dir():  # --python '' is '.', the working directory
            folder, interpreter = shlex.quote(str(python)), shlex.quote(str(python / "bin/python"))
            raise BadInput(f"--python {python} is a folder; it names an interpreter.",
                           hint=f"For an environment's folder, give --venv {folder}, or "
                           f"--python {interpreter}.")  # fmt: skip
        if not os.access(python, os.X_OK):
            raise BadInput(f"{python} is not executable by this user: --python names the "
                           "environment's interpreter (its bin/python).")  # fmt: skip
        return python, "--python"
    active = os.environ.get("VIRTUAL_ENV")
    if active and not _there(Path(active, "bin", "python")):
        raise _not_active(Path(active))
    defaults = [(Path(active), "$VIRTUAL_ENV")] if active else []
    for candidate, why in [*defaults, (Path(DEFAULT_VENV).absolute(), f"./{DEFAULT_VENV}")]:
        if interpreter_gone(candidate / "bin" / "python"):
            raise python_gone(candidate / "bin" / "python", why)
        if _there(candidate / "bin" / "python"):
            return candidate / "bin" / "python", why
    return Path(sys.executable), OWN_ENVIRONMENT


def _there(path: Path) -> bool:
    """``path.exists()``; False where this user cannot look (a working directory it may not
    read: ``sudo -u USER neuron-env doctor`` from root's home)."""
    try:
        return path.exists()
    except OSError:
        return False


def interpreter_gone(python: Path) -> str | None:
    """Where ``python`` leads when it is a link to nothing: a venv whose base interpreter was
    removed (an OS release upgrade took its python3.12, pyenv or uv uninstalled the version).
    None where it starts, or is missing (not a link)."""
    try:
        if not python.is_symlink() or python.exists():
            return None
    except OSError:  # a folder on the way this user may not look into: not known to be gone
        return None
    return os.path.realpath(python)


def python_gone(python: Path, named_by: str) -> BadInput:
    """The error for ``python`` (see :func:`interpreter_gone`), named by ``named_by``."""
    venv = python.parent.parent
    if not (venv / "pyvenv.cfg").is_file():  # not a venv's: nothing of the user's to remake
        return BadInput(
            f"{named_by}: {python} is a link to {interpreter_gone(python)}, which no longer "
            "exists.",
            hint="Name an interpreter that exists with --python PATH.",
        )
    return BadInput(
        f"{named_by}: {python} is a link to {interpreter_gone(python)}, which no longer exists: "
        "the Python this environment was made from was removed or upgraded (an OS release "
        "upgrade, pyenv or uv uninstall), and nothing runs in it any more.",
        hint=f"Make it again with a Python that exists: rm -rf {shlex.quote(str(venv))} && "
        + command("install", "--torch", "2.14", "--venv", str(venv)),
    )


def _not_active(active: Path) -> BadInput:
    """$VIRTUAL_ENV names an environment that cannot be judged: never judge another silently."""
    if interpreter_gone(active / "bin" / "python"):
        return python_gone(active / "bin" / "python", "$VIRTUAL_ENV")
    try:
        (active / "bin" / "python").stat()
        what = "has no bin/python"
    except PermissionError as exc:  # another user's venv, its variable kept by sudo -E
        what = f"this user may not look into ({exc.strerror})"
    except OSError:
        there = _there(active)
        what = "has no bin/python" if there else "does not exist (removed after it was activated?)"
    return BadInput(
        f"$VIRTUAL_ENV names {active}, which {what}.",
        hint="Run 'deactivate' to judge another environment, or name one with --python PATH.",
    )


class NotPython(OperationFailed):
    """``--python`` names a program that does not answer as a Python interpreter."""


def probe_python(python: Path, *, timeout: float = 10.0) -> PythonFacts:
    """Facts about ``python``'s environment; raises on failure (the caller records it).

    Where the probe ran and failed, or printed no facts, the interpreter is asked its version
    alone: one older than :data:`~neuron_env.facts.PYTHON_PROBE_FLOOR` (a system ``python`` of
    2.7, a 3.6) returns that version alone (``readable`` False: judged too old for TorchNeuron,
    its packages not judged); a program that gives no version (``/bin/sh``) is
    :class:`NotPython`; a supported Python keeps the probe's own failure.
    """
    # The user's environment is passed through on purpose: their pip configuration is a fact.
    try:
        result = run([python, "-I", PROBE_SCRIPT], timeout=timeout, env=None)
        return parse(PythonFacts, json.loads(result.stdout), ["python"], JSON_LENIENT)
    except CommandFailed as exc:
        if not exc.returncode:  # a timeout, or it could not start: nothing more to ask
            raise
        failure: OperationFailed = exc
    except (ValueError, SchemaError) as exc:
        failure = OperationFailed(f"{python} returned unreadable facts: {exc}")
    version = version_of(python, min(timeout, 5.0))
    if version is None:
        raise NotPython(f"{python} does not answer as a Python interpreter ({failure.message})")
    if below_probe_floor(version):
        return PythonFacts(executable=str(python), version=version, readable=False)
    raise failure from None
