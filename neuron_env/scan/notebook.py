"""Jupyter notebooks: the code cells are scanned, and findings say which cell and which line in it.

The code cells are read from the nbformat JSON (never the JSON text as Python). Cells are scanned
together, in order, as one module, so an import in the first cell resolves names in the later ones;
a cell that does not parse alone is a ``scan-error`` in that cell and is left out of the module,
and so is a code cell whose ``source`` is neither text nor a list of texts (never a silent skip).
IPython's own syntax is masked the way IPython reads it (:mod:`.ipython`): line magics, help, and
``!command`` escapes (continued over lines ending in a backslash) are not Python; shell escapes
and ``%%bash`` / ``%%sh`` cells are scanned as shell. Notebooks are reported, never rewritten by
``--fix``: their findings say so instead of offering it.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
import warnings
from collections.abc import Callable
from pathlib import Path

from neuron_env.frozen import frozen
from neuron_env.scan.ipython import mask_cell
from neuron_env.scan.model import Finding, Span
from neuron_env.scan.source import NotASourceFile, SourceFile

_FIX_PROMISE = re.compile(r"\s*\(neuron-env scan --fix does this[^)]*\)")
NOT_FIXED_HERE = "Edit the cell: scan --fix does not rewrite notebooks."


@frozen
class Cell:
    number: int  # 1-based position among all the notebook's cells, as editors count them
    python: str  # the cell with IPython-only lines blanked (same line count)
    shell: str  # only the cell's shell lines (same line count)
    problem: str = ""  # why the cell cannot be read (then python and shell are empty)


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
        _cell(number, cell)
        for number, cell in enumerate(cells, start=1)
        if not isinstance(cell, dict) or cell.get("cell_type") == "code"
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


def _cell(number: int, cell: object) -> Cell:
    source = cell.get("source") if isinstance(cell, dict) else None
    if isinstance(source, list) and all(isinstance(line, str) for line in source):
        source = "".join(source)
    if not isinstance(source, str):
        what = "the cell is not a JSON object" if not isinstance(cell, dict) else _kind(source)
        return Cell(number, "", "", f"not a valid notebook cell: {what}")
    python, shell = mask_cell(source.replace("\r\n", "\n").split("\n"))
    return Cell(number, "\n".join(python) + "\n", "\n".join(shell) + "\n")


def _kind(source: object) -> str:
    if source is None:
        return "its source is missing or null"
    if isinstance(source, list):
        return "its source is a list holding something other than text"
    kind = {bool: "true or false", int: "a number", float: "a number", dict: "an object"}
    return f"its source is {kind.get(type(source), type(source).__name__)}, not text"


ScanText = Callable[[SourceFile], list[Finding]]


def scan_notebook(
    path: Path,
    display: str,
    cells: list[Cell],
    scan_python: ScanText,
    scan_shell: ScanText,
    syntax_error: Callable[[SyntaxError], Finding],
    unreadable: Callable[[str], Finding],
) -> list[Finding]:
    """Findings of every code cell, each with its cell number and a line in that cell."""
    found: list[Finding] = []
    parsed: list[Cell] = []
    for cell in cells:
        if cell.problem:
            found.append(_in_cell(unreadable(cell.problem), cell.number, 0))
            continue
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
    suggestion = item.suggestion
    if item.fix is not None or _FIX_PROMISE.search(suggestion):
        suggestion = f"{_FIX_PROMISE.sub('', suggestion)} {NOT_FIXED_HERE}".lstrip()
    return dataclasses.replace(item, span=moved, cell=cell, fix=None, suggestion=suggestion)
