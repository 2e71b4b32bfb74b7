"""The one place a rich console is built, for the terminal and for rendering into text.

Reports that lay out their own lines (the doctor's) write them through a :class:`Writer`: a
:class:`RichWriter` styles them on a terminal, a :class:`PlainWriter` writes the same characters
without importing rich (files, pipes, CI logs), which keeps a plain ``neuron-env doctor`` fast.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TextIO

if TYPE_CHECKING:
    from collections.abc import Iterable

    from rich.console import Console

    from neuron_env.matrix import Note

PLAIN_WIDTH = 120  # pipes, files and CI logs read better wider than rich's 80 columns

Span = tuple[str, str]
"""A piece of a line: its text and a rich style name (``""``: unstyled)."""

# What makes rich style, size or redirect a stream's output on its own: a plain stream is one
# where it would write exactly the characters, 120 columns wide (new_console's choice).
_RICH_DECIDES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "COLUMNS", "JUPYTER_COLUMNS")


class Writer(Protocol):
    """Where a report's lines go: ``width`` columns, one :meth:`line` call per line."""

    @property
    def width(self) -> int: ...

    def line(self, *spans: Span) -> None:
        """Write one line made of ``spans`` (none: an empty line)."""


class PlainWriter:
    """Lines as plain text on ``stream``, ``width`` columns wide (rich is never imported)."""

    def __init__(self, stream: TextIO, width: int = PLAIN_WIDTH) -> None:
        self._stream = stream
        self.width = width

    def line(self, *spans: Span) -> None:
        self._stream.write("".join(text for text, _ in spans) + "\n")


class RichWriter:
    """Lines printed by a rich console, styled as their spans say; rich never wraps them again."""

    def __init__(self, console: Console) -> None:
        self._console = console

    @property
    def width(self) -> int:
        return self._console.width

    def line(self, *spans: Span) -> None:
        from rich.text import Text

        self._console.print(Text.assemble(*spans), soft_wrap=True)


def plain_stream(stream: TextIO) -> bool:
    """Whether a console on ``stream`` would write plain text 120 columns wide: no terminal, and
    nothing in the environment (``FORCE_COLOR``, ``COLUMNS``, ...) or a notebook that makes rich
    decide otherwise."""
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # no isatty, or a closed stream: rich says plain too
        terminal = False
    if terminal or "IPython" in sys.modules:
        return False
    return not any(name in os.environ for name in _RICH_DECIDES)


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
    if "COLUMNS" in os.environ and columns() is None:  # COLUMNS=0 or -5: as if it were unset
        width = _terminal_columns(stream) or PLAIN_WIDTH
    return Console(stderr=stderr, highlight=False, width=width, emoji=False)


def columns() -> int | None:
    """The width ``COLUMNS`` sets, or None where it sets none: unset, not a number, or not a
    positive one (rich would take ``COLUMNS=0`` as zero columns, which no text fits in)."""
    text = os.environ.get("COLUMNS", "").strip()
    return int(text) if text.isdigit() and int(text) > 0 else None


def _terminal_columns(stream: TextIO) -> int | None:
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else None
    except (AttributeError, ValueError, OSError):  # no descriptor, or a closed one
        return None


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


def notes_then_document(result: Any, text: str, output: Path | None) -> None:
    """A :class:`~neuron_env.output.emit.Format`'s ``deliver``: the result's notes on stderr,
    then the document (another tool's input) alone on stdout or in ``output``."""
    from neuron_env.output.emit import write_text

    print_notes(result.notes)
    write_text(output, text)
