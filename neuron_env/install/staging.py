"""Filesystem steps of the install transaction: lock, staging directory, relocation, swap.

The new environment is built in a staging directory beside the target (same filesystem, so the
final rename is atomic). Virtual environments are not relocatable: scripts in ``bin/`` carry the
absolute path of the interpreter, the activate scripts set ``VIRTUAL_ENV``. :func:`relocate`
rewrites the staging path to the target path in those files before the swap. :func:`exchange`
swaps two directories in one system call (``renameat2(RENAME_EXCHANGE)``), so there is no moment
at which the target path is missing; on filesystems without it, two renames are used.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from neuron_env.errors import OperationFailed
from neuron_env.input_files import InputRejected, read_bytes

STAGING_MARK = ".neuron-env-staging-"
_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_REWRITE_LIMIT = 1 << 20  # bin/ scripts are small; larger files are binaries


@contextlib.contextmanager
def locked(target: Path) -> Iterator[None]:
    """Hold an exclusive lock on the target's parent directory, so that two installs cannot race.

    Locking the directory itself leaves no lock file behind; installs into environments that
    share a parent directory take turns.
    """
    fd = os.open(target.parent, os.O_RDONLY)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise OperationFailed(
                f"Another neuron-env install into {target.parent} is running.",
                hint="Wait for it to finish, then run this command again.",
            ) from None
        yield
    finally:
        os.close(fd)


def stale_staging_dirs(target: Path) -> list[Path]:
    """Staging directories that a killed install left beside ``target`` (safe under the lock)."""
    return sorted(target.parent.glob(f".{target.name}{STAGING_MARK}*"))


def make_staging_dir(target: Path) -> Path:
    """A new empty directory beside ``target``, on the same filesystem."""
    return Path(tempfile.mkdtemp(prefix=f".{target.name}{STAGING_MARK}", dir=target.parent))


def copy_venv(source: Path, dest: Path) -> None:
    """Copy an environment (symlinks kept as links) so that the original stays untouched."""
    shutil.copytree(source, dest, symlinks=True)


def relocate(venv: Path, old_prefix: Path, new_prefix: Path) -> list[Path]:
    """Rewrite ``old_prefix`` to ``new_prefix`` in ``bin/`` scripts and ``pyvenv.cfg``."""
    old, new = os.fsencode(old_prefix), os.fsencode(new_prefix)
    changed = []
    candidates = [venv / "pyvenv.cfg", *sorted((venv / "bin").iterdir())]
    for path in candidates:
        if path.is_symlink():
            continue
        try:
            data = read_bytes(path, _REWRITE_LIMIT)
        except InputRejected:  # a directory, a FIFO, a large binary: nothing to relocate
            continue
        if old not in data or b"\0" in data:
            continue
        _rewrite(path, data.replace(old, new))
        changed.append(path)
    return changed


def _rewrite(path: Path, data: bytes) -> None:
    mode = path.stat().st_mode
    tmp = path.with_name(f".{path.name}.neuron-env-tmp")
    tmp.write_bytes(data)
    tmp.chmod(mode)
    tmp.replace(path)


def exchange(a: Path, b: Path) -> None:
    """Atomically swap two directories; falls back to two renames where the kernel cannot."""
    libc = ctypes.CDLL(None, use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is not None:
        rc = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
        if rc == 0:
            return
        err = ctypes.get_errno()
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(a))
    _exchange_by_renames(a, b)


def _exchange_by_renames(a: Path, b: Path) -> None:
    parking = a.with_name(a.name + ".swap")
    a.rename(parking)
    try:
        b.rename(a)
    except BaseException:
        parking.rename(a)
        raise
    parking.rename(b)


def remove_tree(path: Path) -> None:
    """Remove a directory tree, ignoring what is already gone."""
    shutil.rmtree(path, ignore_errors=True)


def recover_stale(target: Path) -> list[str]:
    """Remove the staging directories a killed install left beside ``target``; say what was done.

    A kill between the two renames of the fallback swap leaves the target missing and the new,
    already relocated environment parked in the staging directory: it is put in place.
    """
    said = []
    for stale in stale_staging_dirs(target):
        parked = stale / "venv.swap"
        if not target.exists() and not target.is_symlink() and parked.is_dir():
            parked.rename(target)
            said.append(f"Completed the swap of {target} that a killed install left half done.")
        remove_tree(stale)
        said.append(f"Removed {stale}, left behind by an install that was killed.")
    return said
