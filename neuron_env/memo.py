"""Results remembered between runs: what neuron-env builds from the same inputs every run.

Every ``doctor`` run used to check and build the support matrix from its release files, read the
variable rules from ``rules/scan.toml`` and import packaging's requirement parser to find every
requirement met (~35 ms of CPU together, a fifth of the run), for inputs that rarely change.
:func:`remembered` keeps such a result in the user's cache folder (``$XDG_CACHE_HOME/neuron-env``,
else ``~/.cache/neuron-env``) beside its key: everything it was built from (the files' paths,
where they lead and their bytes; neuron-env's version and the code that builds it; Python's
version), kept whole and compared byte for byte. Any other key is a miss, and the result is built
as before: an edited file is read again, and a file that does not load is the same clear error as
ever (errors are never remembered).

The results are pickles, and loading a pickle runs code: only a file that this user owns, in a
folder this user owns, that no other user may write, is read (the rule ``sudo`` with a user's
``HOME`` needs). Anything else (no home folder, a read-only one, a damaged or foreign file, a
symlink) is a miss; writing is atomic and best effort. ``NEURON_ENV_NO_MEMO=1`` turns it off.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import stat
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from neuron_env.home import home

T = TypeVar("T")

FORMAT = b"neuron-env memo 1"
"""Changed whenever the layout of a remembered file changes."""

OFF = "NEURON_ENV_NO_MEMO"
MAX_BYTES = 64 << 20


def remembered(name: str, sources: Iterable[bytes], build: Callable[[], T]) -> T:
    """``build()``, or the result an earlier run built from exactly ``sources`` (the bytes of
    everything the result depends on besides neuron-env's version and Python's)."""
    folder = memo_folder()
    if folder is None:
        return build()
    key = _key(sources)
    path = folder / f"{name}.pickle"
    found = _load(path, key)
    if found is not None:
        value: T = found[0]  # what build() returned for this key
        return value
    value = build()
    _store(folder, path, key, value)
    return value


def memo_folder() -> Path | None:
    """The folder results are kept in, made if need be; None when there is none to trust."""
    if os.environ.get(OFF, "") not in ("", "0"):
        return None
    base = Path(os.environ.get("XDG_CACHE_HOME", ""))
    if not base.is_absolute():  # the XDG rule: a relative path is ignored
        folder = home()
        if folder is None:  # no home folder (a container's arbitrary uid with HOME unset)
            return None
        base = folder / ".cache"
    if not base.is_absolute():
        return None
    folder = base / "neuron-env"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        found = folder.lstat()
    except (OSError, ValueError):
        return None
    return folder if _trusted(found, stat.S_ISDIR) else None


def _trusted(found: os.stat_result, kind: Callable[[int], bool]) -> bool:
    """This user's own, of the expected kind (not a symlink), writable by no one else."""
    return kind(found.st_mode) and found.st_uid == os.geteuid() and not found.st_mode & 0o022


def _key(sources: Iterable[bytes]) -> bytes:
    """Everything the result was built from, whole: kept beside it and compared byte for byte
    (a digest would need hashlib, whose OpenSSL start costs more than the comparison)."""
    from neuron_env import __version__

    parts = [FORMAT, __version__.encode(), sys.version.encode(), *sources]
    return b"".join(len(part).to_bytes(8, "big") + part for part in parts)


def _load(path: Path, key: bytes) -> tuple[Any] | None:
    """``(value,)`` stored under ``key`` in the trusted file ``path``; None for a miss."""
    from neuron_env.input_files import InputRejected, read_own_bytes

    try:
        data = read_own_bytes(path, MAX_BYTES)
    except InputRejected:  # none, damaged, or not this user's alone: a miss
        return None
    try:
        # Only this user's own file, which no one else may write, is unpickled (see above).
        stored, value = pickle.loads(data)  # noqa: S301
    except Exception:  # damaged, truncated, or written by another neuron-env: a miss
        return None
    return (value,) if stored == key else None


def _store(folder: Path, path: Path, key: bytes, value: object) -> None:
    """Replace ``path`` with ``key`` and ``value``, atomically; nothing when it cannot be."""
    import tempfile

    try:
        data = pickle.dumps((key, value), protocol=pickle.HIGHEST_PROTOCOL)
        fd, name = tempfile.mkstemp(dir=folder, prefix=".memo-")
    except Exception:  # best effort: the result stands without its memo
        return
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data)
        temporary.replace(path)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temporary.unlink()
        if not isinstance(exc, Exception):  # Ctrl-C, SIGTERM: still the caller's to handle
            raise


def source_files(*modules: str) -> list[bytes]:
    """The source of these (imported) modules: their code decides what a result holds."""
    from neuron_env.input_files import InputRejected, read_bytes

    found = []
    for module in modules:
        try:
            found.append(read_bytes(Path(sys.modules[module].__file__ or ""), MAX_BYTES))
        except (KeyError, InputRejected):
            found.append(module.encode())  # no source to read: the version still keys it
    return found
