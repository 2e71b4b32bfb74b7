"""Jupyter notebooks: the code cells are scanned, and findings say which cell and which line in it.

The code cells are read from the nbformat JSON (never the JSON text as Python). Cells are scanned
together, in order, as one module, so an import in the first cell resolves names in the later ones;
a cell that does not parse alone is a ``scan-error`` in that cell and is left out of the module.
IPython lines are not Python: ``%magic`` lines are skipped, ``!command`` lines and ``%%bash`` /
``%%sh`` cells are scanned as shell. Notebooks are reported, never rewritten by ``--fix``.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from neuron_env.scan.model import Finding, Span
from neuron_env.scan.source import NotASourceFile, SourceFile

SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script bash", "%%script sh")


@dataclass(frozen=True)
class Cell:
    number: int  # 1-based position among all the notebook's cells, as editors count them
    python: str  # the cell with IPython-only lines blanked (same line count)
    shell: str  # only the cell's shell lines (same line count)


def read_cells(raw: bytes) -> list[Cell]:
    """The code cells of an nbformat 4 notebook; NotASourceFile when it is not one."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise NotASourceFile(f"not a notebook: not valid JSON ({_short(exc)})") from None
    cells = document.get("cells") if isinstance(document, dict) else None
    if not isinstance(cells, list):
        raise NotASourceFile("not a notebook: no 'cells' list (nbformat 4 is read)")
    language = _language(document)
    if language.lower() not in ("", "python"):
        raise NotASourceFile(f"a notebook in {language}: only Python notebooks are scanned")
    return [
        _cell(number, cell["source"])
        for number, cell in enumerate(cells, start=1)
        if isinstance(cell, dict) and cell.get("cell_type") == "code" and _is_source(cell)
    ]


def _short(exc: BaseException) -> str:
    return str(exc).split("\n", 1)[0][:120] or type(exc).__name__


def _language(document: dict[str, object]) -> str:
    metadata = document.get("metadata")
    if not isinstance(metadata, dict):
        return ""
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        table = metadata.get(key)
        if isinstance(table, dict) and isinstance(table.get(field), str):
            return str(table[field])
    return ""


def _is_source(cell: dict[str, object]) -> bool:
    source = cell.get("source")
    return isinstance(source, str) or (
        isinstance(source, list) and all(isinstance(s, str) for s in source)
    )


def _cell(number: int, source: str | list[str]) -> Cell:
    text = source if isinstance(source, str) else "".join(source)
    lines = text.replace("\r\n", "\n").split("\n")
    if lines and lines[0].strip() in SHELL_CELL_MAGICS:
        shell = ["", *lines[1:]]
        return Cell(number, "\n".join("" for _ in lines) + "\n", "\n".join(shell) + "\n")
    python, shell = [], []
    for line in lines:
        stripped = line.lstrip()
        python.append("" if stripped.startswith(("%", "!")) else line)
        shell.append(
            " " * (len(line) - len(stripped) + 1) + stripped[1:] if stripped[:1] == "!" else ""
        )
    return Cell(number, "\n".join(python) + "\n", "\n".join(shell) + "\n")


ScanText = Callable[[SourceFile], list[Finding]]


def scan_notebook(
    path: Path,
    display: str,
    cells: list[Cell],
    scan_python: ScanText,
    scan_shell: ScanText,
    syntax_error: Callable[[SyntaxError], Finding],
) -> list[Finding]:
    """Findings of every code cell, each with its cell number and a line in that cell."""
    found: list[Finding] = []
    parsed: list[Cell] = []
    for cell in cells:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                ast.parse(cell.python)
            parsed.append(cell)
        except SyntaxError as exc:
            found.append(_in_cell(syntax_error(exc), cell.number, 0))
        except (ValueError, RecursionError, MemoryError):
            found.append(_in_cell(syntax_error(SyntaxError("cannot be parsed")), cell.number, 0))
        shell = scan_shell(SourceFile(path, display, cell.shell))
        found.extend(_in_cell(f, cell.number, 0) for f in shell)
    found.extend(_module_findings(path, display, parsed, scan_python))
    return found


def _module_findings(
    path: Path, display: str, cells: list[Cell], scan_python: ScanText
) -> list[Finding]:
    """Scan the cells as one module, then give each finding back to its cell."""
    starts, text = [], ""
    for cell in cells:
        starts.append((text.count("\n"), cell.number))
        text += cell.python
    try:
        findings = scan_python(SourceFile(path, display, text))
    except SyntaxError:  # e.g. `from __future__` in a later cell: then cell by cell
        return [
            _in_cell(item, cell.number, 0)
            for cell in cells
            for item in scan_python(SourceFile(path, display, cell.python))
        ]
    found = []
    for item in findings:
        offset, number = max(s for s in starts if s[0] < item.span.line)
        found.append(_in_cell(item, number, offset))
    return found


def _in_cell(item: Finding, cell: int, offset: int) -> Finding:
    span = item.span
    moved = Span(span.line - offset, span.column, span.end_line - offset, span.end_column)
    return dataclasses.replace(item, span=moved, cell=cell, fix=None)
