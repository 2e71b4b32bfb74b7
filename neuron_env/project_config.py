"""Project defaults: what a project's users would otherwise repeat on every command line.

``doctor``, ``preflight`` and ``install`` read one table, from the nearest of these files,
searching the current directory and then its parents up to the repository root (the first
directory holding ``.git`` or ``.hg``) or the filesystem root:

- ``neuron-env.toml`` (the whole file is the table), else
- ``pyproject.toml`` with a ``[tool.neuron-env]`` table (one without it is passed over).

Keys: ``release`` ("2.33.1"), ``torch`` ("2.14") and ``allow`` (check id → why it may fail:
``allow = {"env.cache" = "scratch disk"}``). A flag on the command line wins over the file;
``--allow`` adds to the file's ``allow``. An unknown key or check id is bad input with a
"did you mean"; the file is read through the bounded reader like every other input.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from neuron_env.errors import MalformedFile
from neuron_env.resources import docs_page

FILE = "neuron-env.toml"
PYPROJECT = "pyproject.toml"
KEYS = ("release", "torch", "allow")
REPOSITORY_MARKERS = (".git", ".hg")


@dataclass(frozen=True)
class ProjectDefaults:
    """The defaults a project file sets (nothing when there is no file)."""

    source: Path | None = None
    release: str | None = None
    torch: str | None = None
    allow: dict[str, str] = field(default_factory=dict)


def load_project_defaults(start: Path | None = None) -> ProjectDefaults:
    """The defaults of the nearest project file above ``start`` (the current directory)."""
    for folder in _searched(Path.cwd() if start is None else start):
        found = _table_in(folder)
        if found is not None:
            path, table = found
            return _defaults(path, table)
    return ProjectDefaults()


def _searched(start: Path) -> list[Path]:
    folders = []
    for folder in [start.resolve(), *start.resolve().parents]:
        folders.append(folder)
        if any((folder / marker).exists() for marker in REPOSITORY_MARKERS):
            break  # a project's settings never come from outside its repository
    return folders


def _table_in(folder: Path) -> tuple[Path, Any] | None:
    # Whatever stands at these names is read (a FIFO, a device or a link to one is refused with
    # a message), never passed over: a settings file that silently does not apply is a lie.
    own = folder / FILE
    if os.path.lexists(own):
        return own, _read(own)
    pyproject = folder / PYPROJECT
    if os.path.lexists(pyproject) and _mentions_table(pyproject):
        tool = _read(pyproject).get("tool")
        if isinstance(tool, dict) and "neuron-env" in tool:
            return pyproject, tool["neuron-env"]
    return None


# [tool.neuron-env], [tool."neuron-env".x], tool.neuron-env.release = or neuron-env.release =
# (under [tool]); not `neuron-env = "..."` of [project.scripts]. Most projects' pyproject.toml
# has no such line, and then a doctor run parses no TOML at all (tomllib costs start-up time).
_TABLE_LINE = re.compile(
    rb"""(?m)^[ \t]*(?:\[[ \t]*)?(?:tool[ \t]*\.[ \t]*)?["']?neuron-env["']?[ \t]*[.\]]"""
)


def _mentions_table(path: Path) -> bool:
    from neuron_env.input_files import TOML_LIMITS, InputRejected, read_bytes

    try:
        return _TABLE_LINE.search(read_bytes(path, TOML_LIMITS.max_bytes)) is not None
    except InputRejected as exc:
        raise MalformedFile(f"Cannot read {path}: {exc.problem}.") from None


def _read(path: Path) -> dict[str, Any]:
    from neuron_env.input_files import TOML_LIMITS, InputRejected, load_toml

    try:
        return load_toml(path, TOML_LIMITS)
    except InputRejected as exc:
        where = f" at {exc.key}" if exc.key else ""
        raise MalformedFile(f"Cannot read {path}: {exc.problem}{where}.") from None


def _defaults(path: Path, table: Any) -> ProjectDefaults:
    from neuron_env.schema import suggest

    name = f"{path} [tool.neuron-env]" if path.name == PYPROJECT else str(path)
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
