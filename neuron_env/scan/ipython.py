"""IPython's own syntax in a notebook cell, masked the way IPython reads it (same line numbers).

IPython turns these into Python before running a cell, so a scan must not read them as Python:

* a cell magic on the cell's first line (``%%bash``, ``%%time``, ``%%writefile x.py``): the shell
  magics' body is shell; the timing and capturing magics' body is Python; any other body is not
  code (``%%html``, ``%%writefile notes.txt``);
* escapes at the start of a line: ``!cmd`` and ``!!cmd`` (shell), ``%magic``, ``?name``,
  ``name?`` / ``name??`` (help), and their assigned forms ``files = !ls`` / ``x = %env``.

An escape goes on over the next lines while each ends in a backslash (``!torchrun ... \\``), as
IPython joins them. Each escape's first line becomes ``pass`` at its indentation, so a block that
held only the escape still parses; its shell text keeps its columns.
"""

from __future__ import annotations

import re

SHELL_CELL_MAGICS = frozenset({"bash", "sh", "system"})
PYTHON_CELL_MAGICS = frozenset({"time", "timeit", "capture", "prun", "python", "python3"})
_ASSIGNED = re.compile(r"[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*(?=[!%])")
_HELP_END = re.compile(r"%{0,2}[A-Za-z_*][\w*]*(?:\.[A-Za-z_*][\w*]*)*\?\??")
_SHELL = "shell"
_OTHER = "other"


def mask_cell(lines: list[str]) -> tuple[list[str], list[str]]:
    """The cell's lines as Python (IPython syntax masked) and as shell (only its shell text)."""
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is not None and lines[first].lstrip().startswith("%%"):
        return _cell_magic(lines, first)
    return _mask_lines(lines)


def _cell_magic(lines: list[str], first: int) -> tuple[list[str], list[str]]:
    words = lines[first].strip()[2:].split()
    name = words[0] if words else ""
    if name == "script" and len(words) > 1:
        name = words[1].rsplit("/", 1)[-1]
    body = lines[first + 1 :]
    blank = [""] * (first + 1)
    if name in SHELL_CELL_MAGICS:
        return blank + [""] * len(body), blank + body
    if name in PYTHON_CELL_MAGICS or (name == "writefile" and words[-1].endswith(".py")):
        python, shell = _mask_lines(body)
        return blank + python, blank + shell
    return [""] * len(lines), [""] * len(lines)


def _mask_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    python, shell = [], []
    going_on = ""  # the kind of escape a backslash carries over to the next line
    for line in lines:
        if going_on:
            python.append("")
            shell.append(line if going_on == _SHELL else "")
        else:
            kind, start = _escape(line)
            indent = line[: len(line) - len(line.lstrip())]
            python.append(f"{indent}pass" if kind else line)
            shell.append(" " * start + line[start:] if kind == _SHELL else "")
            going_on = kind
        going_on = going_on if line.rstrip().endswith("\\") else ""
    return python, shell


def _escape(line: str) -> tuple[str, int]:
    """Which escape ``line`` starts (empty: plain Python), and where its shell command begins."""
    stripped = line.lstrip()
    at = len(line) - len(stripped)
    assigned = _ASSIGNED.match(stripped)
    if assigned:
        at += assigned.end()
        stripped = stripped[assigned.end() :]
    if stripped.startswith("!!"):
        return _SHELL, at + 2
    if stripped.startswith("!"):
        return _SHELL, at + 1
    if stripped.startswith(("%", "?")) or _HELP_END.fullmatch(stripped.rstrip()):
        return _OTHER, 0
    return "", 0
