"""What statement-level fixes need from the whole module: blocks that would become empty,
PyTorch/XLA imports that the fixes leave unused, and ``import torch`` where a fix needs it.

Everything is decided on the original syntax tree, knowing which spans the fixes replace: a name
bound by a ``torch_xla`` import is unused when each of its uses lies inside a replaced span.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import replace

from neuron_env.frozen import frozen
from neuron_env.scan.model import Edit, Finding, Span
from neuron_env.scan.source import SourceFile

_REST_OF_LINE = re.compile(r"[ \t]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)?")


@frozen
class Change:
    """An edit to make, and the finding it fixes (None for an added ``import torch``)."""

    edit: Edit
    finding: Finding | None
    more: tuple[Finding, ...] = ()  # other findings the same edit fixes (one import, two names)


def statement_changes(
    source: SourceFile, tree: ast.Module, findings: Sequence[Finding]
) -> list[Change]:
    """The fixes of ``findings`` made whole: removals resolved, imports dropped or added."""
    fixable = [f for f in findings if f.fix is not None]
    covered = [_edit(f).span for f in fixable]
    statements = {_key(source.span(s)): s for s in _statements(tree)}
    removals: dict[int, tuple[ast.stmt, list[Finding]]] = {}
    changes = []
    for item in fixable:
        node = statements.get(_key(_edit(item).span)) if _edit(item).remove else None
        if node is not None:
            removals[id(node)] = (node, [item])
        elif not _edit(item).remove:
            changes.append(Change(_edit(item), item))
    for node, items in _unused_xla_imports(source, tree, covered, findings):
        removals[id(node)] = (node, items)
    changes += _resolve_removals(source, tree, removals)
    if any(c.edit.needs_torch for c in changes):
        changes.append(Change(_import_torch(source, tree), None))
    return changes


def _edit(item: Finding) -> Edit:
    assert item.fix is not None
    return item.fix


def _key(span: Span) -> tuple[int, int, int, int]:
    return (span.line, span.column, span.end_line, span.end_column)


def _statements(tree: ast.AST) -> Iterator[ast.stmt]:
    return (node for node in ast.walk(tree) if isinstance(node, ast.stmt))


# --- imports -----------------------------------------------------------------------------------


def _unused_xla_imports(
    source: SourceFile, tree: ast.Module, covered: list[Span], findings: Sequence[Finding]
) -> Iterator[tuple[ast.stmt, list[Finding]]]:
    loads: dict[str, list[Span]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads.setdefault(node.id, []).append(source.span(node))
    for statement in _statements(tree):
        bound = _xla_import_names(statement)
        if not bound or any(_used(loads.get(name, []), covered) for name in bound):
            continue
        span = source.span(statement)
        mine = [f for f in findings if f.rule.id == "xla-import" and _inside(f.span, span)]
        if mine:
            removal = Edit(span, source.segment(span), "", remove=True)
            yield statement, [replace(item, fix=removal) for item in mine]


def _xla_import_names(statement: ast.stmt) -> list[str]:
    """The names a ``torch_xla``-only import binds; empty for any other statement."""
    names = getattr(statement, "names", [])
    if isinstance(statement, ast.Import) and all(_is_xla(a.name) for a in names):
        return [a.asname or a.name.split(".")[0] for a in names]
    from_xla = isinstance(statement, ast.ImportFrom) and _is_xla(statement.module or "")
    if from_xla and not getattr(statement, "level", 0) and all(a.name != "*" for a in names):
        return [a.asname or a.name for a in names]
    return []


def _is_xla(module: str) -> bool:
    return module == "torch_xla" or module.startswith("torch_xla.")


def _used(uses: list[Span], covered: list[Span]) -> bool:
    return any(not any(_inside(use, span) for span in covered) for use in uses)


def _inside(inner: Span, outer: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (
        inner.end_line,
        inner.end_column,
    ) <= (outer.end_line, outer.end_column)


def _import_torch(source: SourceFile, tree: ast.Module) -> Edit:
    """``import torch`` above the first statement after the docstring and ``__future__``
    imports (so above the first import), or at the end of a module that has nothing else."""
    after = 0
    for index, statement in enumerate(tree.body):
        future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
        if future or (index == 0 and _is_docstring(statement)):
            after = statement.end_lineno or statement.lineno
        else:
            return _insert_line(source, statement.lineno, "import torch")
    return _insert_line(source, after + 1, "import torch")


def _is_docstring(statement: ast.stmt) -> bool:
    value = getattr(statement, "value", None)
    return (
        isinstance(statement, ast.Expr)
        and isinstance(value, ast.Constant)
        and isinstance(value.value, str)
    )


def _insert_line(source: SourceFile, line: int, text: str) -> Edit:
    newline = "\r\n" if "\r\n" in source.text else "\n"
    if line <= len(source.lines):
        return Edit(Span(line, 1, line, 1), "", f"{text}{newline}")
    last = source.lines[-1] if source.lines else ""
    end = Span(max(len(source.lines), 1), len(last) + 1, max(len(source.lines), 1), len(last) + 1)
    prefix = "" if not last or last.endswith(("\n", "\r")) else newline
    return Edit(end, "", f"{prefix}{text}{newline}")


# --- removing statements -----------------------------------------------------------------------


def _resolve_removals(
    source: SourceFile, tree: ast.Module, removals: dict[int, tuple[ast.stmt, list[Finding]]]
) -> list[Change]:
    """Whole lines go; a block whose every statement goes keeps one ``pass``."""
    changes = []
    for parent, body in _bodies(tree):
        gone = [s for s in body if id(s) in removals]
        if not gone:
            continue
        keep_pass = len(gone) == len(body) and not isinstance(parent, ast.Module)
        for index, statement in enumerate(gone):
            item, *more = removals[id(statement)][1]
            span = source.span(statement)
            if keep_pass and index == 0:
                edit = Edit(span, source.segment(span), "pass")
            else:
                lines = _whole_lines(source, span)
                if lines is None:
                    continue  # shares its line with other code: leave it to a person
                edit = Edit(lines, source.segment(lines), "")
            fixed = tuple(replace(f, fix=edit) for f in more)
            changes.append(Change(edit, replace(item, fix=edit), fixed))
    return changes


def _bodies(tree: ast.Module) -> Iterator[tuple[ast.AST, list[ast.stmt]]]:
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            body = getattr(node, name, None)
            if isinstance(body, list) and body and isinstance(body[0], ast.stmt):
                yield node, body


def _whole_lines(source: SourceFile, span: Span) -> Span | None:
    """The span of the lines ``span`` fills (with a trailing comment), or None."""
    first = source.lines[span.line - 1]
    if first[: span.column - 1].strip():
        return None
    last = source.lines[span.end_line - 1]
    rest = last[span.end_column - 1 :]
    if _REST_OF_LINE.fullmatch(rest) is None:
        return None
    if span.end_line < len(source.lines):
        return Span(span.line, 1, span.end_line + 1, 1)
    return Span(span.line, 1, span.end_line, len(last) + 1)
