"""The one place a rich console is built, for the terminal and for rendering into text."""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console

    from neuron_env.matrix import Note

PLAIN_WIDTH = 120  # pipes, files and CI logs read better wider than rich's 80 columns


def new_console(*, stderr: bool = False, file: TextIO | None = None) -> Console:
    """A rich console on stdout (``stderr``: on stderr), or a plain one writing to ``file``.

    On a stream it is coloured on a terminal and plain text without one or with ``NO_COLOR``
    (rich honours it); it is 120 columns wide without a terminal unless ``COLUMNS`` says
    otherwise. Into ``file`` it writes plain text 120 columns wide. Either way it never
    highlights numbers or paths on its own, and never turns ``:name:`` in printed values (host
    names, messages) into emoji: what it shows is what the markup says.
    """
    from rich.console import Console

    if file is not None:
        return Console(
            file=file, color_system=None, width=PLAIN_WIDTH, highlight=False, emoji=False
        )
    stream = sys.stderr if stderr else sys.stdout
    width = None if stream.isatty() or os.environ.get("COLUMNS") else PLAIN_WIDTH
    return Console(stderr=stderr, highlight=False, width=width, emoji=False)


def print_notes(notes: Iterable[Note]) -> None:
    """Notes for the person at the terminal, on stderr (stdout holds the document)."""
    err = new_console(stderr=True)
    marks = {"warning": "warning:", "info": "note:"}
    for note in sorted(notes, key=lambda n: n.level != "warning"):
        err.print(f"{marks[note.level]} {note.message}", markup=False, highlight=False)


def plain_text(printer: Callable[..., None], *args: Any, **options: Any) -> str:
    """What ``printer(console, *args, **options)`` prints, as plain text (for files and pipes)."""
    buffer = io.StringIO()
    printer(new_console(file=buffer), *args, **options)
    return buffer.getvalue()
