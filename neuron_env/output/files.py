"""The one writer of every file a command is told to write (``-o FILE``, ``-o DIR``'s files).

A file is never written through a symbolic link someone else could have planted:

- The text goes to a new temporary file in the same directory, which is then renamed over the
  path. A link standing at the path is replaced by the new file; its target is never opened.
- A link in a world-writable sticky directory (``/tmp``), or one owned by neither the user nor
  the directory's owner, is refused (exit 2, naming the link and its target), at the path or
  at any folder on the way to it (``/tmp/evil`` of ``/tmp/evil/out.json``): the rule the
  kernel applies with ``fs.protected_symlinks``. Replacing it would be harmless, but a user who
  meant to write through it would find the file elsewhere than expected, and root replacing a
  link another user planted in a shared folder is what an attack looks like.
- An existing file keeps its mode, and (when root replaces it) its owner; nothing that exists
  is chmod-ed or chown-ed, and a hard link's other names keep the old text.
- What is not a regular file (a terminal, a pipe, ``/dev/null``), and a path that leads through
  ``/proc`` (``/dev/stdout``, ``/dev/fd/1``: the process's own descriptors, whatever they are
  open on) is written in place, as ``open()`` would. A regular file elsewhere under ``/dev`` (a
  tmpfs at ``/dev/shm``) is a file like any other: replaced whole, a link there never followed.

Appending (``$GITHUB_STEP_SUMMARY``) opens the file itself, after the same link rule.
Standard library only.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from neuron_env.errors import BadInput

_MAX_HOPS = 40  # links followed before a chain counts as a loop (the kernel's limit)


def write_file(path: Path, data: bytes, *, append: bool = False, mode: int | None = None) -> None:
    """``data`` to ``path`` whole (or appended); ``mode`` for a file this creates.

    :class:`BadInput` for a planted link; :class:`OSError` for the rest (the caller words it).
    """
    from neuron_env.signals import deferred_interrupts

    refuse_planted_link(path)
    if append or _in_place(path):
        with deferred_interrupts():  # a signal waits for the whole text: never half of it
            _write_in_place(path, data, append=append)
    else:
        _replace_whole(path, data, mode)


def refuse_planted_link(path: Path) -> None:
    """Exit 2 when ``path``, or a folder on the way to it, is a link that the kernel's
    ``fs.protected_symlinks`` would not follow for a careful user: in a world-writable sticky
    directory, or owned by neither the user nor the directory's owner.

    ``/tmp/evil/out.json`` where ``/tmp/evil`` was planted is refused as ``/tmp/evil/out.json``
    itself would be: each component is checked, from the root down, before anything is created.
    """
    whole = path if path.is_absolute() else Path.cwd() / path
    for part in (*reversed(whole.parents), whole):
        if part != part.parent:  # the root is no link
            _refuse_one(part)


def _refuse_one(path: Path) -> None:
    try:
        link = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return  # nothing there yet, or a folder we cannot read: the write says why
    if not stat.S_ISLNK(link.st_mode):
        return
    folder = path.parent.stat()
    shared = folder.st_mode & stat.S_ISVTX and folder.st_mode & stat.S_IWOTH
    foreign = link.st_uid not in (os.geteuid(), folder.st_uid)
    if not (shared or foreign):
        return
    from neuron_env.escape import terminal

    where = "a world-writable shared folder" if shared else "a folder where another user made it"
    raise BadInput(
        f"{terminal(str(path))} is a symbolic link to {terminal(str(path.readlink()))} in {where}; "
        "neuron-env does not write through it, nor replace it.",
        hint="Remove the link, or choose an -o path in a folder of your own.",
    )


def _in_place(path: Path) -> bool:
    """Something that is not a regular file (a terminal, a pipe), or one of the process's own
    descriptors (``/dev/stdout``): written in it."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return False
    except OSError:  # a link loop, a denied folder: the rename path says why
        return False
    return not stat.S_ISREG(mode) or _through_proc(path)


def _through_proc(path: Path) -> bool:
    """Whether ``path``, followed one link at a time, passes through ``/proc``.

    ``/dev/stdout`` is a link to ``/proc/self/fd/1``, a link the kernel resolves to whatever
    descriptor 1 is open on: with ``> report.json`` that is a regular file, which ``realpath``
    names. Replacing it "whole" would rename a new file over ``/dev/stdout`` itself (root would
    replace the system's link; anyone else is refused by ``/dev``), and the report would never
    reach ``report.json``. Judging by the final target's name instead (under ``/dev/``) would
    write through a link in a folder of one's own on ``/dev/shm``.
    """
    current = path.absolute()
    for _ in range(_MAX_HOPS):
        folder = current.parent.resolve()
        if folder.parts[:2] == ("/", "proc"):
            return True
        here = folder / current.name
        try:
            if not here.is_symlink():
                return False
            current = folder / here.readlink()  # an absolute link's target replaces the folder
        except OSError:
            return False
    return False


def _write_in_place(path: Path, data: bytes, *, append: bool) -> None:
    with path.open("ab" if append else "wb") as handle:
        handle.write(data)


def _replace_whole(path: Path, data: bytes, mode: int | None) -> None:
    """Write ``data`` to a new file beside ``path``, then rename it over ``path`` (a link there
    is replaced, not followed); an existing regular file's mode and owner are kept."""
    old = _regular(path)
    partial = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.partial")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(partial, flags | getattr(os, "O_CLOEXEC", 0), 0o666 if mode is None else mode)
    try:  # created less the umask, as open("w") would
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            if old is not None:
                _keep_mode_and_owner(stream.fileno(), old)
        partial.replace(path)
    except BaseException:  # an interrupt or a full disk: the old file stays, the partial goes
        partial.unlink(missing_ok=True)
        raise


def _regular(path: Path) -> os.stat_result | None:
    try:
        found = os.lstat(path)
    except FileNotFoundError:
        return None
    return found if stat.S_ISREG(found.st_mode) else None


def _keep_mode_and_owner(fd: int, old: os.stat_result) -> None:
    if os.geteuid() == 0 and (old.st_uid, old.st_gid) != (0, 0):
        os.fchown(fd, old.st_uid, old.st_gid)  # root rewrote a user's file: still the user's
    os.fchmod(fd, stat.S_IMODE(old.st_mode))
