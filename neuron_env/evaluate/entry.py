"""ENTRY and ``--shapes`` as the user typed them, checked before anything runs (bad input: exit 2).

ENTRY is ``module:function`` (imported from the current directory and ``PYTHONPATH``) or
``path/to/file.py:function``; the function may be a dotted attribute (``module:Class.make``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen


def _example() -> str:
    """The form of ENTRY, as a command a fresh shell runs (the names are only examples)."""
    from neuron_env.invocation import command

    return f"For example: {command('evaluate', 'my_model.py:make')}, or my_package.models:make."


@frozen
class Entry:
    """A user's entry: a function in a module or in a file."""

    text: str
    attr: str
    module: str | None = None
    path: Path | None = None

    def request(self) -> dict[str, Any]:
        """The entry as the worker reads it."""
        path = str(self.path) if self.path is not None else None
        return {"text": self.text, "attr": self.attr, "module": self.module, "path": path}


def parse_entry(text: str, cwd: Path | None = None) -> Entry:
    """``module:function`` or ``file.py:function``; a missing file or a bad name is bad input."""
    where, colon, attr = text.rpartition(":")
    if not colon or not where or not attr:
        raise BadInput(
            f"ENTRY {text!r} is not module:function nor path.py:function.", hint=_example()
        )
    if not all(part.isidentifier() for part in attr.split(".")):
        raise BadInput(f"{attr!r} in ENTRY {text!r} is not a Python name.", hint=_example())
    if where.endswith(".py") or os.sep in where:
        return Entry(text, attr, path=_entry_file(where, cwd or Path.cwd()))
    if not all(part.isidentifier() for part in where.split(".")):
        raise BadInput(
            f"{where!r} in ENTRY {text!r} is neither a module name nor a .py file.", hint=_example()
        )
    return Entry(text, attr, module=where)


def _entry_file(where: str, cwd: Path) -> Path:
    try:
        path = Path(where).expanduser()
    except RuntimeError:  # '~/train.py' quoted, and no home folder to put in its place
        raise BadInput(f"{where} starts with ~, and this user has no home folder.") from None
    path = path if path.is_absolute() else cwd / path
    if not path.exists():
        raise BadInput(f"{where} does not exist.", hint=_example())
    if not path.is_file() or path.suffix != ".py":
        raise BadInput(f"{where} is not a Python file (.py).", hint=_example())
    return path.resolve()


def parse_shapes(values: Sequence[str]) -> tuple[tuple[int, ...], ...]:
    """``--shapes 2x128,4x128`` (repeatable) as shapes; duplicates are kept once, in order."""
    shapes: list[tuple[int, ...]] = []
    for value in values:
        for item in filter(None, (part.strip() for part in value.split(","))):
            shape = _shape(item)
            if shape not in shapes:
                shapes.append(shape)
    return tuple(shapes)


def _shape(item: str) -> tuple[int, ...]:
    try:
        shape = tuple(int(n) for n in item.lower().split("x"))
    except ValueError:
        shape = ()
    if not shape or any(n <= 0 for n in shape):
        raise BadInput(
            f"--shapes {item!r} is not a shape.",
            hint="Give sizes joined by x, several separated by commas: --shapes 2x128,4x256.",
        )
    return shape


def search_path(cwd: Path | None = None) -> list[str]:
    """Where the worker imports ``module:function`` from (``python -I`` ignores PYTHONPATH)."""
    extra = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    return [str(cwd or Path.cwd()), *extra]
