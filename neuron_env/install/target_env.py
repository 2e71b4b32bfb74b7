"""Which virtual environment to install into, and which interpreter builds it.

``--venv DIR`` names the environment (created when missing, upgraded when present); ``--python
PATH`` alone names the environment that interpreter belongs to, and together with a new ``--venv``
the interpreter to create it with. Without either, the active virtualenv is the target. neuron-env
never installs into an interpreter outside a virtual environment: it could not build the new
environment beside it and swap.
"""

from __future__ import annotations

import errno
import functools
import os
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

from neuron_env.command import clean_env, run
from neuron_env.errors import BadInput, CommandFailed, OperationFailed
from neuron_env.facts import PythonFacts
from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, MiB, read_bytes
from neuron_env.invocation import command
from neuron_env.probe.python_env import interpreter_gone, probe_python

PROBE_TIMEOUT = 30.0
MAX_PYVENV_CFG = 1 * MiB  # a few lines; a venv's own file, but one a user can replace


@frozen
class TargetEnv:
    """The environment to install into; ``facts`` is None when it does not exist yet."""

    path: Path
    base_python: Path
    python_version: str
    facts: PythonFacts | None

    @property
    def exists(self) -> bool:
        return self.facts is not None

    @property
    def python_minor(self) -> str:
        return ".".join(self.python_version.split(".")[:2])

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    def installed(self) -> dict[str, str]:
        if self.facts is None:
            return {}
        return {name: dist.version for name, dist in self.facts.distributions.items()}


def locate_target(
    venv: Path | None,
    python: Path | None,
    allowed_pythons: Sequence[str],
    chosen: Sequence[str],
) -> TargetEnv:
    """Find the target environment and the interpreter to (re)build it with.

    A path that cannot be read (a symbolic link loop, a directory without permission) is bad
    input: one message, exit 2. ``chosen``: the options that picked the target (``--torch 2.14
    --release 2.34.0``), for the install a hint prints.
    """
    try:
        return _locate(venv, python, allowed_pythons, chosen)
    except RuntimeError as exc:  # Path.resolve() on a symbolic link loop (Python < 3.13)
        if "loop" not in str(exc):
            raise  # not a loop: said as what it is, never as a loop
        raise BadInput(
            f"--venv {venv} is a symbolic link loop: it never reaches a directory ({exc}).",
            hint="Point --venv at a real directory, or fix the link.",
        ) from None
    except OSError as exc:
        raise BadInput(
            f"Cannot read {exc.filename or venv}: {_os_reason(exc)}.",
            hint="Check its permissions (ls -ld), or install into another --venv DIR.",
        ) from None


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symbolic link loop"
    return exc.strerror or str(exc)


def check_writable_parent(target: TargetEnv) -> None:
    """The staging directory is built beside the target: its parent must be writable."""
    parent = target.path.parent
    if not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(
            f"Cannot write to {parent} (permission denied or read-only): neuron-env builds the "
            f"new environment beside {target.path} and swaps it in, so it needs to write there.",
            hint=f"Run as a user who can write to {parent}, or choose a --venv in a directory "
            "you can write to.",
        )


#: The environment a hint creates: the one doctor judges when run in the same folder.
NEW_VENV = ".venv-neuron"


def _locate(
    venv: Path | None, python: Path | None, allowed_pythons: Sequence[str], chosen: Sequence[str]
) -> TargetEnv:
    python = _interpreter(python) if python is not None else None
    if venv is None and python is not None:
        return _existing_from_python(python, chosen)
    if venv is None:
        active = os.environ.get("VIRTUAL_ENV")
        if not active:
            raise BadInput(
                "No target environment: give --venv DIR (created if missing) or activate one.",
                hint=f"For example: {command('install', *chosen, '--venv', NEW_VENV)}",
            )
        venv = Path(active)
    path = Path(os.path.normpath(venv.absolute()))
    if path.is_symlink():  # swap the environment the link points to, keep the link
        path = path.resolve(strict=True)
    if _is_venv(path):
        target = _existing(path)
        if python is not None:
            _check_same_python(target, python)
        return target
    _check_can_create(path)
    base = python or find_base_python(allowed_pythons)
    return TargetEnv(path, base, python_version(base), None)


def _interpreter(python: Path) -> Path:
    """``python3.12`` (a name, looked up on PATH) or a path, made absolute."""
    if "/" not in str(python):
        found = shutil.which(str(python))
        if found is None:
            raise BadInput(f"No interpreter named '{python}' on PATH.")
        return Path(found)
    return python.absolute()


@functools.cache
def python_version(python: Path) -> str:
    """The full version (``3.12.4``) of an interpreter, by running it (once per command: finding
    an interpreter asks each candidate, then the caller asks the one found again)."""
    try:
        result = run(  # -E -s, not -I (3.4+): a Python 2.7 is told it is too old, not "cannot run"
            [python, "-E", "-s", "-c", "import platform; print(platform.python_version())"],
            timeout=PROBE_TIMEOUT,
            env=clean_env(),
        )
    except CommandFailed as exc:
        raise BadInput(f"Cannot run Python interpreter {python}: {exc.message}") from None
    return result.stdout.strip()


def _existing_from_python(python: Path, chosen: Sequence[str]) -> TargetEnv:
    if not python.exists():
        raise BadInput(f"Python interpreter {python} does not exist.")
    facts = _probe(python)
    if not facts.in_venv:
        raise BadInput(
            f"{python} is not inside a virtual environment; neuron-env installs only into one, "
            "so that it can build the new environment beside it and swap.",
            hint="Create one with: "
            f"{command('install', *chosen, '--venv', NEW_VENV, '--python', str(python))}",
        )
    return _existing(Path(facts.prefix))


def _existing(path: Path) -> TargetEnv:
    facts = _probe(path / "bin" / "python")
    return TargetEnv(path, _base_of(path), facts.version, facts)


def _probe(python: Path) -> PythonFacts:
    try:
        return probe_python(python, timeout=PROBE_TIMEOUT)
    except CommandFailed as exc:
        raise OperationFailed(
            f"Cannot inspect the environment of {python}: {exc.message}.",
            hint="If the environment is broken, remove it or install into a new --venv DIR.",
        ) from None


def _is_venv(path: Path) -> bool:
    return (path / "pyvenv.cfg").is_file() and (path / "bin" / "python").exists()


def _check_can_create(path: Path) -> None:
    gone = interpreter_gone(path / "bin" / "python")
    if gone and (path / "pyvenv.cfg").is_file():
        raise BadInput(
            f"{path} is a virtual environment whose Python is gone: bin/python is a link to "
            f"{gone}, which no longer exists (an OS release upgrade, pyenv or uv uninstall); "
            "neuron-env will not replace it.",
            hint=f"Remove it (rm -rf {shlex.quote(str(path))}) and run the same command again, "
            "or choose another --venv DIR.",
        )
    if path.exists() and not (path.is_dir() and not any(path.iterdir())):
        raise BadInput(
            f"{path} exists and is not a virtual environment; neuron-env will not replace it.",
            hint="Choose another --venv DIR, or remove it first.",
        )
    if not path.parent.is_dir():
        blocked = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
        if blocked is not None:  # mkdir -p would fail there too
            raise BadInput(f"{blocked} is a file, not a folder: --venv {path} cannot be made "
                           "under it.", hint="Choose another --venv DIR.")  # fmt: skip
        raise BadInput(
            f"The directory {path.parent} does not exist.",
            hint=f"Create it first: mkdir -p {shlex.quote(str(path.parent))}",
        )


def _check_same_python(target: TargetEnv, python: Path) -> None:
    wanted = python_version(python)
    if wanted.split(".")[:2] != target.python_version.split(".")[:2]:
        raise BadInput(
            f"{target.path} uses Python {target.python_minor}, not {wanted}; an upgrade keeps "
            "the environment's Python.",
            hint="To change Python, install into a new --venv DIR.",
        )


def _base_of(venv: Path) -> Path:
    """The interpreter a venv was made from: its ``bin/python`` link, else pyvenv.cfg's home."""
    resolved = (venv / "bin" / "python").resolve()
    if not resolved.is_relative_to(venv.resolve()):
        return resolved
    home = _pyvenv_cfg(venv).get("home", "")
    for name in ("python3", "python"):
        candidate = Path(home) / name
        if home and candidate.exists():
            return candidate
    return Path(sys.executable)


def _pyvenv_cfg(venv: Path) -> dict[str, str]:
    values = {}
    try:
        raw = read_bytes(venv / "pyvenv.cfg", MAX_PYVENV_CFG)
    except InputRejected as exc:
        raise BadInput(f"{venv / 'pyvenv.cfg'}: {exc.problem}.") from None
    for line in raw.decode("utf-8", errors="replace").splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip()
    return values


def find_base_python(allowed: Sequence[str]) -> Path:
    """An interpreter of an ``allowed`` minor: on PATH, in pyenv or among uv's Pythons."""
    from neuron_env.install.interpreters import find_interpreter
    from neuron_env.probe.os_release import probe_os

    return find_interpreter(allowed, probe_os(Path("/")).key)
