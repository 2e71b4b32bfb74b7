"""A Python source file as text, and exact positions in it.

The file is decoded the way Python decodes it (PEP 263 cookie, UTF-8 BOM), line endings are kept
as they are, and AST positions (UTF-8 byte columns) are turned into character columns, so that
reported columns match what editors show and edits touch exactly the characters they mean to.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
import warnings
from dataclasses import dataclass
from pathlib import Path

from neuron_env.scan.model import Span

# Python ends lines at \r\n, \r or \n (not at the other characters str.splitlines() knows).
_LINE_BREAK = re.compile(r"(?<=\n)|(?<=\r)(?!\n)")


@dataclass(frozen=True)
class SourceFile:
    path: Path  # where it was read from
    display: str  # how reports name it
    text: str
    encoding: str = "utf-8"

    @classmethod
    def read(cls, path: Path, display: str) -> SourceFile:
        """Read and decode ``path``; OSError, SyntaxError (bad cookie) or UnicodeDecodeError."""
        raw = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(raw).readline)
        return cls(path, display, raw.decode(encoding), encoding)

    @functools.cached_property
    def lines(self) -> tuple[str, ...]:
        """The lines with their line endings (split only when a position is needed)."""
        return tuple(line for line in _LINE_BREAK.split(self.text) if line)

    def parse(self) -> ast.Module:
        """The syntax tree; SyntaxError (or ValueError for NUL bytes) when it is not Python."""
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like
            return ast.parse(self.text, filename=self.display)

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

    def offset(self, line: int, column: int) -> int:
        """The character offset in :attr:`text` of a 1-based line and column."""
        return sum(len(text) for text in self.lines[: line - 1]) + column - 1

    def segment(self, span: Span) -> str:
        return self.text[
            self.offset(span.line, span.column) : self.offset(span.end_line, span.end_column)
        ]
