"""Project defaults: what a project's users would otherwise repeat on every command line.

``doctor``, ``preflight`` and ``install`` read one table, from the nearest of these files,
searching the current directory and then its parents, up to the first of: the repository root
(the first directory holding ``.git`` or ``.hg``), the home directory, the filesystem root, or
the edge of the filesystem (a parent on another device is never searched):

- ``neuron-env.toml`` (the whole file is the table), else
- ``pyproject.toml`` with a ``tool.neuron-env`` table, in any TOML spelling (``[tool.neuron-env]``,
  ``[tool."neuron-env"]``, dotted keys, inline tables); one without it is passed over.

A file is applied only when it is trusted (git's ``safe.directory`` idea): owned by the user or
root, not writable by other users, in a folder other users cannot replace it in. A file that is
not trusted is ignored, and said so with the reason: a ``neuron-env.toml`` someone planted in a
shared folder such as ``/tmp`` would otherwise turn a broken host Ready. ``--no-config``, or
``NEURON_ENV_NO_CONFIG=1``, ignores every project file.

Keys: ``release`` ("2.33.1"), ``torch`` ("2.14") and ``allow`` (check id → why it may fail:
``allow = {"env.cache" = "scratch disk"}``). A flag on the command line wins over the file;
``--allow`` adds to the file's ``allow``. An unknown key or check id is bad input with a
"did you mean"; the file is read through the bounded reader like every other input.
"""

from __future__ import annotations

import os
import stat
from dataclasses import field
from pathlib import Path
from typing import Any

from neuron_env.errors import MalformedFile
from neuron_env.frozen import frozen
from neuron_env.home import home
from neuron_env.resources import docs_page

FILE = "neuron-env.toml"
PYPROJECT = "pyproject.toml"
KEYS = ("release", "torch", "allow")
REPOSITORY_MARKERS = (".git", ".hg")
NO_CONFIG = "NEURON_ENV_NO_CONFIG"


@frozen
class IgnoredFile:
    """A project file found but not applied, and why."""

    path: Path
    reason: str


@frozen
class ProjectDefaults:
    """The defaults a project file sets (nothing when there is no file)."""

    source: Path | None = None
    release: str | None = None
    torch: str | None = None
    allow: dict[str, str] = field(default_factory=dict)
    ignored: tuple[IgnoredFile, ...] = ()

    @property
    def config(self) -> str | None:
        """The file applied, as reports name it (``pyproject.toml [tool.neuron-env]``)."""
        return describe(self.source) if self.source else None

    @property
    def ignored_reasons(self) -> tuple[tuple[str, str], ...]:
        """(path, why) of each file ignored."""
        return tuple((str(i.path), i.reason) for i in self.ignored)


def load_project_defaults(start: Path | None = None, *, enabled: bool = True) -> ProjectDefaults:
    """The defaults of the nearest trusted project file above ``start`` (the current directory);
    none when ``enabled`` is false or ``NEURON_ENV_NO_CONFIG`` is set (to anything but 0)."""
    if not enabled or os.environ.get(NO_CONFIG, "0") not in ("", "0"):
        return ProjectDefaults()
    ignored: list[IgnoredFile] = []
    for folder in _searched(Path.cwd() if start is None else start):
        path = _candidate(folder)
        if path is None:
            continue
        reason = distrust(path)  # before it is parsed: a planted file is ignored, even a bad one
        if reason is not None:
            ignored.append(IgnoredFile(path, reason))
            continue
        table = _table_in(path)
        if table is None:
            continue
        defaults = _defaults(path, table)
        return ProjectDefaults(defaults.source, defaults.release, defaults.torch, defaults.allow,
                               tuple(ignored))  # fmt: skip
    return ProjectDefaults(ignored=tuple(ignored))


def _searched(start: Path) -> list[Path]:
    """The folders searched: ``start`` and its parents, up to the repository root, the home
    directory, or the edge of ``start``'s filesystem."""
    home = _home()
    folders: list[Path] = []
    device = None
    for folder in [start.resolve(), *start.resolve().parents]:
        try:
            here = folder.stat().st_dev
        except OSError:
            break
        if device is not None and here != device:
            break  # another filesystem: a mount another user controls, never searched
        device = here
        try:
            marked = folder == home or any((folder / m).exists() for m in REPOSITORY_MARKERS)
        except OSError:  # a folder this user may not look into: where its repository ends is
            break  # unknown, so nothing there or above is read
        folders.append(folder)
        if marked:
            break  # a project's settings never come from outside its repository or home
    return folders


def _home() -> Path | None:
    folder = home()
    try:
        return None if folder is None else folder.resolve()
    except (RuntimeError, OSError):  # a link loop
        return None


def distrust(path: Path) -> str | None:
    """Why ``path`` must not be applied, or None when it is trusted: owned by the user or root,
    writable by no other user, in a folder no other user can replace it in. What is not a
    regular file is left to the reader, which refuses it with its own message."""
    try:
        found = path.stat()
        link = path.lstat()
        folder = path.parent.stat()
    except OSError:
        return None  # the reader says why it cannot be read
    if not stat.S_ISREG(found.st_mode):
        return None
    me = os.geteuid()
    for what, owner in (("it", found.st_uid), ("the link to it", link.st_uid)):
        if owner not in (me, 0):
            return f"{what} is owned by {_user(owner)}, not by you or root"
    if found.st_mode & stat.S_IWOTH:
        return "every user may write it"
    if found.st_mode & stat.S_IWGRP and found.st_gid not in (os.getegid(), 0):
        return f"the group {_group(found.st_gid)} may write it"
    if folder.st_mode & stat.S_IWOTH and not folder.st_mode & stat.S_ISVTX:
        return f"every user may replace it: its folder {path.parent} is writable by all"
    return None


def _user(uid: int) -> str:
    import pwd

    try:
        return f"{pwd.getpwuid(uid).pw_name} (uid {uid})"
    except KeyError:
        return f"uid {uid}"


def _group(gid: int) -> str:
    import grp

    try:
        return f"{grp.getgrgid(gid).gr_name} (gid {gid})"
    except KeyError:
        return f"gid {gid}"


def _candidate(folder: Path) -> Path | None:
    # Whatever stands at these names is read (a FIFO, a device or a link to one is refused with
    # a message), never passed over: a settings file that silently does not apply is a lie.
    own = folder / FILE
    if os.path.lexists(own):
        return own
    pyproject = folder / PYPROJECT
    if os.path.lexists(pyproject) and _may_hold_table(pyproject):
        return pyproject
    return None


def _table_in(path: Path) -> Any:
    """The settings table of a trusted file; None for a pyproject.toml without one."""
    if path.name == FILE:
        return _read(path)
    tool = _read(path).get("tool")
    if isinstance(tool, dict) and "neuron-env" in tool:
        return tool["neuron-env"]
    return None


def _may_hold_table(path: Path) -> bool:
    """Whether the file could spell the ``neuron-env`` key at all: it holds the word, or an
    escape (``"neuron\\u002denv"``) that could make it. Most projects' pyproject.toml does
    neither, and then a doctor run parses no TOML at all (tomllib costs start-up time); every
    file that could hold the table is parsed, so every valid spelling of it is read."""
    from neuron_env.input_files import TOML_LIMITS, InputRejected, read_bytes

    try:
        data = read_bytes(path, TOML_LIMITS.max_bytes)
    except InputRejected as exc:
        raise MalformedFile(f"Cannot read {path}: {exc.problem}.") from None
    return b"neuron" in data or b"\\u" in data or b"\\U" in data


def _read(path: Path) -> dict[str, Any]:
    from neuron_env.input_files import TOML_LIMITS, InputRejected, load_toml

    try:
        return load_toml(path, TOML_LIMITS)
    except InputRejected as exc:
        where = f" at {exc.key}" if exc.key else ""
        raise MalformedFile(f"Cannot read {path}: {exc.problem}{where}.") from None


def _defaults(path: Path, table: Any) -> ProjectDefaults:
    from neuron_env.schema import suggest

    name = describe(path)
    if not isinstance(table, dict):
        raise MalformedFile(f"{name} is not a table of settings.", hint=_HINT)
    for key in table:
        if key not in KEYS:
            raise MalformedFile(f"{name}: unknown key '{key}'; {suggest(key, KEYS)}", hint=_HINT)
    return ProjectDefaults(
        source=path,
        release=_text(table, "release", name),
        torch=_text(table, "torch", name),
        allow=_allow(table.get("allow", {}), name),
    )


def describe(path: Path) -> str:
    """The file as messages name it: ``pyproject.toml [tool.neuron-env]`` or the file."""
    return f"{path} [tool.neuron-env]" if path.name == PYPROJECT else str(path)


_HINT = f"Its keys: release, torch, allow (see {docs_page('commands/doctor/#project-defaults')})."


def _text(table: dict[str, Any], key: str, name: str) -> str | None:
    value = table.get(key)
    if value is not None and not isinstance(value, str):
        raise MalformedFile(f"{name}: '{key}' must be a string, e.g. {key} = \"2.14\".")
    return value


def _allow(value: Any, name: str) -> dict[str, str]:
    from neuron_env.checks.registry import CHECKS
    from neuron_env.invocation import command
    from neuron_env.schema import suggest

    example = 'allow = {"env.cache" = "scratch disk"}'
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise MalformedFile(f"{name}: 'allow' maps check ids to reasons, e.g. {example}.")
    known = [check.id for check in CHECKS]
    for check_id in value:
        if check_id not in known:
            raise MalformedFile(
                f"{name}: allow names an unknown check id '{check_id}'; {suggest(check_id, known)}",
                hint=f"List them with '{command('doctor', '--list-checks')}'.",
            )
    return dict(value)
