"""A Python source file as text, and exact positions in it.

The file is decoded the way Python decodes it (PEP 263 cookie, UTF-8 BOM), line endings are kept
as they are, and AST positions (UTF-8 byte columns) are turned into character columns, so that
reported columns match what editors show and edits touch exactly the characters they mean to.
"""

from __future__ import annotations

import ast
import functools
import io
import itertools
import os
import re
import stat
import tokenize
import warnings
from pathlib import Path

from neuron_env.frozen import frozen
from neuron_env.scan.model import Span

MAX_FILE_BYTES = 10 * 1024 * 1024  # no source file is this large; a device or a dump might be
MAX_NOTEBOOK_BYTES = 50 * 1024 * 1024  # notebooks carry their outputs (images) besides the code
# Python ends lines at \r\n, \r or \n (not at the other characters str.splitlines() knows).
_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


@frozen
class SourceFile:
    path: Path  # where it was read from
    display: str  # how reports name it
    text: str
    encoding: str = "utf-8"

    @classmethod
    def read(cls, path: Path, display: str) -> SourceFile:
        """Read and decode ``path``; OSError, SyntaxError (bad cookie) or UnicodeDecodeError.

        :class:`NotASourceFile` for a pipe, a device or a file over :data:`MAX_FILE_BYTES`.
        """
        return cls.decode(path, display, read_bounded(path))

    @classmethod
    def decode(cls, path: Path, display: str, raw: bytes) -> SourceFile:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return cls(path, display, raw.decode(encoding), encoding)

    @functools.cached_property
    def lines(self) -> tuple[str, ...]:
        """The lines with their line endings (split only when a position is needed)."""
        return tuple(line for line in _LINE_BREAK.split(self.text) if line)

    def parse(self) -> ast.Module:
        """The syntax tree; SyntaxError (or ValueError for NUL bytes) when it is not Python.

        Nesting too deep for the parser (100,000 unary minuses) raises RecursionError, or
        MemoryError on Python 3.11: both become :class:`NotASourceFile`.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            try:
                return ast.parse(self.text, filename=self.display)
            except (RecursionError, MemoryError):
                raise NotASourceFile("cannot be parsed: nested too deeply") from None

    def column(self, line: int, byte_column: int) -> int:
        """The 1-based character column of an AST position (line 1-based, UTF-8 byte offset)."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return len(text.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore")) + 1

    def span(self, node: ast.expr | ast.stmt | ast.alias | ast.keyword) -> Span:
        end_line = node.end_lineno or node.lineno
        end_column = node.end_col_offset if node.end_col_offset is not None else node.col_offset
        return Span(
            node.lineno,
            self.column(node.lineno, node.col_offset),
            end_line,
            self.column(end_line, end_column),
        )

    @functools.cached_property
    def line_starts(self) -> tuple[int, ...]:
        """The character offset of each line's start (and of the end of the text)."""
        return (0, *itertools.accumulate(len(line) for line in self.lines))

    def offset(self, line: int, column: int) -> int:
        """The character offset in :attr:`text` of a 1-based line and column."""
        starts = self.line_starts
        return starts[min(line - 1, len(starts) - 1)] + column - 1

    def segment(self, span: Span) -> str:
        return self.text[
            self.offset(span.line, span.column) : self.offset(span.end_line, span.end_column)
        ]


class NotASourceFile(Exception):
    """A path that scan refuses to read or parse, with the reason as its message."""


def read_bounded(path: Path, limit: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes, without ever blocking.

    Opened non-blocking and checked on the open descriptor (not by name first), so a FIFO, a
    ``/dev/fd`` pipe or a device swapped in is refused instead of read forever.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotASourceFile(f"not a regular file ({file_kind(info.st_mode)})")
        if info.st_size > limit:
            raise NotASourceFile(too_large(info.st_size, limit))
        chunks, size = [], 0
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:  # it grew while being read
                raise NotASourceFile(too_large(size, limit))
        return b"".join(chunks)
    finally:
        os.close(fd)


def first_line(path: Path) -> bytes:
    """The start of a regular file's first line (for its shebang); empty for anything else."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return b""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return b""
        return os.read(fd, 256).split(b"\n", 1)[0]
    except OSError:
        return b""
    finally:
        os.close(fd)


def too_large(size: int, limit: int) -> str:
    return f"larger than {limit // (1024 * 1024)} MiB ({size:,} bytes): not a source file"


def file_kind(mode: int) -> str:
    """``a FIFO``, ``a character device``... for messages."""
    kinds = [
        (stat.S_ISFIFO, "a FIFO or pipe"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ]
    return next((name for test, name in kinds if test(mode)), "a special file")
