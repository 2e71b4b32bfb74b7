"""``--fix``: rewrite the safe, mechanical findings, touching nothing else, and write atomically.

Each fix is an :class:`~neuron_env.scan.model.Edit` at exact AST positions, so formatting,
comments, line endings and the file's encoding stay as they were (span-based edits checked by a
re-parse, rather than a concrete-syntax tree: see :mod:`.grammar`). A patch is refused, with the
reason, when the file is reached through a link leaving the scanned tree, when the result would
not parse on the oldest Python the code must still run on, or when the file has other hard links
(the atomic rename below would silently split them: the other names would keep the old text).
Writing re-reads the file first and refuses when it changed since it was scanned (an edit saved
while the question waited), then replaces it through a temporary file in the same directory
(fsync, rename, mode kept): a crash, a full disk or a kill leaves the old file or the new one,
never a part.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import stat
import tempfile
from collections.abc import Collection, Sequence
from dataclasses import replace
from pathlib import Path

from neuron_env.errors import OperationFailed
from neuron_env.frozen import frozen
from neuron_env.scan.cleanup import statement_changes
from neuron_env.scan.grammar import PythonVersion, fstring_quotes, grammar_problem
from neuron_env.scan.model import Edit, Finding
from neuron_env.scan.source import NotASourceFile, SourceFile, read_bounded

OLDEST_PYTHON: PythonVersion = (3, 10)  # the XLA-era torch-neuronx line ran on 3.10


class FileChanged(OperationFailed):
    """The file is not what was scanned any more: nothing was written to it."""


@frozen
class FilePatch:
    """The new text of one file, and the findings it fixes (or why it is refused)."""

    file: Path  # the real file to write (a link inside the tree is followed to it)
    display: str
    encoding: str
    old: str
    new: str
    fixed: tuple[Finding, ...]
    digest: str = ""  # sha256 of the bytes the patch was computed from
    problem: str = ""  # why this patch must not be written; empty when it may

    def diff(self) -> str:
        """A unified diff (``a/PATH`` → ``b/PATH``) for people to read."""
        old = [line.rstrip("\r\n") for line in SourceFile(self.file, "", self.old).lines]
        new = [line.rstrip("\r\n") for line in SourceFile(self.file, "", self.new).lines]
        lines = difflib.unified_diff(
            old, new, f"a/{self.display}", f"b/{self.display}", lineterm=""
        )
        return "".join(line + "\n" for line in lines)

    @property
    def changed_lines(self) -> tuple[int, int]:
        """Lines the patch adds and removes, as a diff counts them (an added ``import torch``
        and dropped XLA imports included, which are no finding's own edit)."""
        old = SourceFile(self.file, "", self.old).lines
        new = SourceFile(self.file, "", self.new).lines
        opcodes = difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes()
        changed = [(j2 - j1, i2 - i1) for tag, i1, i2, j1, j2 in opcodes if tag != "equal"]
        return sum(a for a, _ in changed), sum(r for _, r in changed)

    def landed(self) -> bool:
        """Whether the file holds the new text now: after an interrupt, the disk says whether
        it was written (the signal may come after the rename but before the caller noted it)."""
        try:
            return read_bounded(self.file) == self.new.encode(self.encoding)
        except (OSError, NotASourceFile):
            return False

    def write(self) -> None:
        """Replace the file atomically; FileChanged when it is no longer what was scanned."""
        if self.problem:
            raise OperationFailed(f"{self.display}: not written: {self.problem}")
        try:
            current = read_bounded(self.file)
        except OSError as exc:
            raise OperationFailed(f"Cannot read {self.display}: {exc.strerror}.") from None
        except NotASourceFile as exc:  # replaced by a pipe or a device since the scan
            raise FileChanged(f"{self.display} changed after it was scanned ({exc}).") from None
        if self.digest and hashlib.sha256(current).hexdigest() != self.digest:
            raise FileChanged(
                f"{self.display} changed after it was scanned (saved while the question "
                "waited?); nothing was written to it, so your edit is kept.",
                hint=_again(self.file),
            )
        try:
            replace_atomically(self.file, self.new.encode(self.encoding))
        except OSError as exc:
            raise OperationFailed(
                f"Cannot write {self.display}: {exc.strerror}; the file is unchanged."
            ) from None


def replace_atomically(target: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``target``, fsync it, rename it over ``target``."""
    mode = stat.S_IMODE(target.stat().st_mode)
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    temporary = Path(name)
    try:
        with os.fdopen(fd, "wb") as stream:
            stream.write(data)
            stream.flush()
            os.fsync(stream.fileno())
        temporary.chmod(mode)
        temporary.replace(target)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise
    with contextlib.suppress(OSError):  # make the rename itself durable
        directory = os.open(target.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)


def plan_fixes(
    findings: Sequence[Finding],
    *,
    outside: Collection[str] = (),
    python: PythonVersion = OLDEST_PYTHON,
) -> list[FilePatch]:
    """One patch per file that has fixable findings, in the order the files were reported.

    ``outside``: display names of files reached through a link leaving the scanned tree (refused).
    ``python``: the oldest Python whose grammar every fixed file must parse with.
    """
    by_file: dict[Path, list[Finding]] = {}
    for item in findings:
        by_file.setdefault(item.file, []).append(item)
    return [
        _patch(file, items, outside, python)
        for file, items in by_file.items()
        if any(item.fix is not None and item.cell is None for item in items)
    ]


def _patch(
    file: Path, findings: list[Finding], outside: Collection[str], python: PythonVersion
) -> FilePatch:
    display = findings[0].path
    real = Path(os.path.realpath(file))
    try:
        raw = read_bounded(real)
        source = SourceFile.decode(real, display, raw)
    except (OSError, NotASourceFile, UnicodeDecodeError, SyntaxError):
        raise _changed(display, real) from None
    digest = hashlib.sha256(raw).hexdigest()
    if display in outside:
        problem = (
            "it is reached through a symbolic link that leaves the scanned tree; "
            f"fix {real} where it lives"
        )
        text = source.text
        return FilePatch(real, display, source.encoding, text, text, (), digest, problem)
    text, applied = _apply(source, findings)
    problem = grammar_problem(text, python)
    if problem:
        problem = f"the fixed file would not parse on Python {python[0]}.{python[1]} ({problem})"
    elif not os.access(real, os.W_OK):  # the rename over it would ignore its mode; as an editor
        mode = stat.S_IMODE(real.stat().st_mode)  # does, a read-only file is left as it is
        problem = (
            f"it is read-only (mode {mode:o}: a Perforce checkout, or protected on purpose); "
            "make it writable (chmod u+w) and run --fix again"
        )
    elif _hard_links(real) > 1:  # the atomic rename would give this name a new file of its own
        problem = (
            f"it has {_hard_links(real)} hard links, and writing it safely (a new file renamed "
            "over it) would leave the other names with the old text; fix it by hand, or copy it "
            "to break the link and run --fix again"
        )
    fixed = tuple(sorted(applied, key=lambda f: f.sort_key))
    return FilePatch(real, display, source.encoding, source.text, text, fixed, digest, problem)


def _apply(source: SourceFile, findings: list[Finding]) -> tuple[str, list[Finding]]:
    try:
        tree = source.parse()
    except (SyntaxError, ValueError, NotASourceFile):  # it changed since the scan
        raise _changed(source.display, source.path) from None
    changes = statement_changes(source, tree, findings)
    quotes = fstring_quotes(source, tree)
    text, applied, last_start = source.text, [], len(source.text) + 1
    spans = [(_offsets(source, change.edit), change) for change in changes]
    for (start, end), change in sorted(spans, key=lambda item: item[0], reverse=True):
        if end > last_start:
            continue  # overlaps an edit already made; a later scan will offer it again
        edit = change.edit
        if text[start:end] != edit.old:
            raise _changed(source.display, source.path)
        new = _requote(edit, quotes.get(start))
        text = text[:start] + new + text[end:]
        last_start = start
        if change.finding is not None:
            fixed = change.finding
            applied.append(fixed if new == edit.new else replace(fixed, fix=replace(edit, new=new)))
            applied.extend(change.more)
    return text, applied


def _hard_links(path: Path) -> int:
    try:
        return path.stat().st_nlink
    except OSError:
        return 1


def _changed(display: str, file: Path) -> OperationFailed:
    return OperationFailed(
        f"{display} changed while it was being scanned; nothing was written to it.",
        hint=_again(file),
    )


def _again(file: Path) -> str:
    """The scan that offers the fixes of ``file`` again (its own path: any folder works)."""
    from neuron_env.invocation import command

    return f"Run '{command('scan', '--fix', str(file.absolute()))}' again."


def _offsets(source: SourceFile, edit: Edit) -> tuple[int, int]:
    span = edit.span
    return source.offset(span.line, span.column), source.offset(span.end_line, span.end_column)


def _requote(edit: Edit, enclosing: str | None) -> str:
    """Inside ``f"…"`` an inserted ``"neuron"`` becomes ``'neuron'`` (Python < 3.12 needs it)."""
    if enclosing is None or len(enclosing) == 3 or enclosing not in edit.new:
        return edit.new
    other = "'" if enclosing == '"' else '"'
    return edit.new.replace(enclosing, other)
