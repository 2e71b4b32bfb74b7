"""Scan files and directories: find the Python files, scan each, gather one report.

A file that cannot be scanned (unreadable, not decodable, not valid Python for this interpreter)
becomes a ``scan-error`` finding at the place of the problem, not a crash: one bad file never hides
the findings of the others, and it still fails the run (it is an error that nothing was checked).
A path that does not exist is bad input (exit 2) before anything is scanned.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.scan.detect import detect, finding
from neuron_env.scan.model import Finding, RuleSet, ScanReport, Span
from neuron_env.scan.source import SourceFile
from neuron_env.scan.uses import collect_uses

SCAN_ERROR = "scan-error"
# Never source of the user's program: caches, dependencies, virtual environments (also any
# directory holding a pyvenv.cfg) and hidden directories such as .git and .tox.
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})


@dataclass(frozen=True)
class ScanOptions:
    root: Path  # reports name files relative to it (SARIF: relative to the repository root)
    exclude: tuple[str, ...] = ()  # globs matched against the relative path and the name


def scan(paths: Sequence[Path], rules: RuleSet, options: ScanOptions) -> ScanReport:
    """Scan ``paths`` (files, or directories walked for ``*.py``) with ``rules``."""
    files = list(python_files(paths, options))
    findings = [f for path, display in files for f in scan_file(path, display, rules)]
    return ScanReport(
        rules=rules,
        root=str(options.root),
        files=tuple(display for _, display in files),
        findings=tuple(sorted(findings, key=lambda f: f.sort_key)),
    )


def scan_file(path: Path, display: str, rules: RuleSet) -> list[Finding]:
    """The findings of one file, or one ``scan-error`` finding saying why it could not be read."""
    try:
        source = SourceFile.read(path, display)
        tree = source.parse()
        if not rules.may_match(source.text):
            return []  # parsed (a syntax error is still reported), but nothing to look for
        return detect(collect_uses(tree), rules, source)
    except OSError as exc:
        return [_scan_error(rules, path, display, f"cannot read the file: {exc.strerror}")]
    except UnicodeDecodeError as exc:
        problem = f"not valid {exc.encoding} text at byte {exc.start}"
        return [_scan_error(rules, path, display, problem)]
    except SyntaxError as exc:
        where = Span(exc.lineno or 1, exc.offset or 1, exc.lineno or 1, exc.offset or 1)
        problem = f"not valid Python {_python()}: {exc.msg}"
        return [_scan_error(rules, path, display, problem, where)]
    except (ValueError, RecursionError) as exc:  # NUL bytes; absurdly deep nesting
        return [_scan_error(rules, path, display, f"cannot be parsed: {exc}")]


def _python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _scan_error(
    rules: RuleSet, path: Path, display: str, problem: str, span: Span | None = None
) -> Finding:
    source = SourceFile(path, display, "")
    return finding(rules.get(SCAN_ERROR), source, span or Span(1, 1, 1, 1), problem)


# --- which files ----------------------------------------------------------------------------


def python_files(paths: Iterable[Path], options: ScanOptions) -> Iterator[tuple[Path, str]]:
    """(path, display name) of each file to scan, sorted within directories, each file once."""
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise BadInput(f"{path}: no such file or directory.", hint="Check the PATH arguments.")
        candidates = [path] if path.is_file() else _walk(path, options)
        for candidate in candidates:
            display = display_name(candidate, options.root)
            key = candidate.resolve()
            if key not in seen and not _excluded(display, options.exclude):
                seen.add(key)
                yield candidate, display


def _walk(directory: Path, options: ScanOptions) -> Iterator[Path]:
    for current, dirs, files in os.walk(directory):
        here = Path(current)
        dirs[:] = sorted(d for d in dirs if _wanted_dir(here / d, options))
        for name in sorted(files):
            if name.endswith(".py"):
                yield here / name


def _wanted_dir(path: Path, options: ScanOptions) -> bool:
    name = path.name
    if name.startswith(".") or name in SKIPPED_DIRS or (path / "pyvenv.cfg").exists():
        return False
    return not _excluded(display_name(path, options.root), options.exclude)


def _excluded(display: str, patterns: tuple[str, ...]) -> bool:
    name = display.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(display, p) or fnmatch.fnmatch(name, p) for p in patterns)


def display_name(path: Path, root: Path) -> str:
    """``src/train.py`` for a file under ``root``; the absolute path otherwise."""
    absolute = Path(os.path.normpath(path.absolute()))
    try:
        return absolute.relative_to(os.path.normpath(root.absolute())).as_posix()
    except ValueError:
        return absolute.as_posix()
