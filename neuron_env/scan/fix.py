"""``--fix``: rewrite the safe, mechanical findings in place, touching nothing else.

Each fix is an :class:`~neuron_env.scan.model.Edit` at exact AST positions, so formatting,
comments, line endings and the file's encoding stay as they were. Before writing, each edit's
original text is checked again; a file that changed since it was scanned is left alone.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from neuron_env.errors import OperationFailed
from neuron_env.scan.model import Edit, Finding
from neuron_env.scan.source import SourceFile


@dataclass(frozen=True)
class FilePatch:
    """The new text of one file, and the findings it fixes."""

    file: Path
    display: str
    encoding: str
    old: str
    new: str
    fixed: tuple[Finding, ...]

    def diff(self) -> str:
        """A unified diff (``a/PATH`` → ``b/PATH``) for people to read."""
        old = [line.rstrip("\r\n") for line in SourceFile(self.file, "", self.old).lines]
        new = [line.rstrip("\r\n") for line in SourceFile(self.file, "", self.new).lines]
        lines = difflib.unified_diff(
            old, new, f"a/{self.display}", f"b/{self.display}", lineterm=""
        )
        return "".join(line + "\n" for line in lines)

    def write(self) -> None:
        try:
            self.file.write_bytes(self.new.encode(self.encoding))
        except OSError as exc:
            raise OperationFailed(f"Cannot write {self.display}: {exc.strerror}.") from None


def plan_fixes(findings: Sequence[Finding]) -> list[FilePatch]:
    """One patch per file that has fixable findings, in the order the files were reported."""
    by_file: dict[Path, list[Finding]] = {}
    for item in findings:
        if item.fix is not None:
            by_file.setdefault(item.file, []).append(item)
    return [_patch(file, items) for file, items in by_file.items()]


def _patch(file: Path, findings: list[Finding]) -> FilePatch:
    source = SourceFile.read(file, findings[0].path)
    text, applied, last_start = source.text, [], len(source.text) + 1
    ordered = sorted(findings, key=lambda f: _start(source, f), reverse=True)
    for item in ordered:  # from the end, so earlier offsets stay valid
        edit = _edit(item)
        start, end = _start(source, item), source.offset(edit.span.end_line, edit.span.end_column)
        if end > last_start:
            continue  # overlaps an edit already made; a later scan will offer it again
        if text[start:end] != edit.old:
            raise OperationFailed(
                f"{item.path} changed while it was being scanned; nothing was written to it.",
                hint="Run 'neuron-env scan --fix' again.",
            )
        text = text[:start] + edit.new + text[end:]
        applied.append(item)
        last_start = start
    fixed = tuple(sorted(applied, key=lambda f: f.sort_key))
    return FilePatch(file, source.display, source.encoding, source.text, text, fixed)


def _edit(item: Finding) -> Edit:
    assert item.fix is not None
    return item.fix


def _start(source: SourceFile, item: Finding) -> int:
    span = _edit(item).span
    return source.offset(span.line, span.column)
