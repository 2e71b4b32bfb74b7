"""How a printed command names neuron-env so that it runs as pasted into a fresh shell.

A quick start leaves neuron-env in a virtual environment's ``bin``, which a new shell does not
have on its PATH: a fix that begins ``neuron-env ...`` would fail there. The command is the bare
name only when the system's own PATH finds this very script; otherwise it is the script's
absolute path, or ``PYTHON -m neuron_env`` when neuron-env was not started from its script.
"""

from __future__ import annotations

import functools
import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

NAME = "neuron-env"
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
"""What a fresh login shell's PATH holds on every Linux distribution we support."""


_global_options: tuple[str, ...] = ()


def carry_global_options(matrix_dirs: Sequence[Path]) -> None:
    """The global options of this run that a printed command needs to mean the same thing: a
    ``--matrix-dir`` may hold the very release the command names (made absolute, since the
    command may be pasted in another folder). ``$NEURON_ENV_MATRIX_DIR`` is left to the shell:
    read from the environment and from a flag, one folder would be read twice."""
    global _global_options
    carried: list[str] = []
    for folder in matrix_dirs:
        carried += ["--matrix-dir", str(Path(folder).absolute())]
    _global_options = tuple(carried)
    program.cache_clear()


@functools.cache
def program() -> str:
    """``neuron-env``, its absolute path, or ``PYTHON -m neuron_env``, then the carried global
    options; shell-quoted."""
    carried = [shlex.join(_global_options)] if _global_options else []
    return " ".join([_program(), *carried])


def _program() -> str:
    started = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    script = _script(started)
    if script is None:
        return shlex.join([sys.executable, "-m", "neuron_env"])
    on_path = _which(NAME, SYSTEM_PATH)
    if on_path is not None and _same(Path(on_path), script):
        return NAME
    return shlex.quote(str(script))


def _script(started: Path | None) -> Path | None:
    """The console script neuron-env was started from, made absolute (None: ``-m``, tests)."""
    if started is None or started.name != NAME:
        return None
    name = str(started)
    found = name if "/" in name else _which(name, os.environ.get("PATH", os.defpath))
    if found is None or not os.access(found, os.X_OK):
        return None
    return Path(found).absolute()


def _which(name: str, path: str) -> str | None:
    """``shutil.which(name, path=path)`` for a bare name on POSIX: the first executable file of
    that name in ``path``'s folders (shutil's import pulls in bz2, lzma and fnmatch: ~2 ms of
    every run, for this one lookup)."""
    if not path:
        return None
    for folder in path.split(os.pathsep):
        candidate = Path(folder or os.curdir, name)
        if os.access(candidate, os.F_OK | os.X_OK) and not candidate.is_dir():
            return str(candidate)
    return None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.samefile(b)
    except OSError:
        return False


def command(*args: str) -> str:
    """``neuron-env ARGS...`` as pasted into a fresh shell (every argument quoted)."""
    return " ".join([program(), *(shlex.quote(a) for a in args)])
