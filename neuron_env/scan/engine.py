"""Scan files and directories: find the Python files, scan each, gather one report.

A file that cannot be scanned (unreadable, not decodable, not valid Python for this interpreter)
becomes a ``scan-error`` finding at the place of the problem, not a crash: one bad file never hides
the findings of the others, and it still fails the run (it is an error that nothing was checked).
A PATH argument that does not exist, is a loop of symbolic links, or is neither a regular file nor
a directory (a FIFO, a ``<(cat file)`` pipe, ``/dev/zero``) is bad input (exit 2) before anything
is scanned. In a directory, such a file is a ``scan-error`` finding; nothing is read without a
bound (10 MiB, 50 MiB for a notebook with its outputs) or in a way that can block.
"""

from __future__ import annotations

import errno
import fnmatch
import os
import stat
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.invocation import command
from neuron_env.scan.containers import dockerfile_as_shell, is_dockerfile, yaml_as_shell
from neuron_env.scan.detect import detect, finding
from neuron_env.scan.model import Finding, RuleSet, ScanReport, Span
from neuron_env.scan.notebook import read_cells, scan_notebook
from neuron_env.scan.shell import is_shell_shebang, shell_findings
from neuron_env.scan.source import (
    MAX_FILE_BYTES,
    MAX_NOTEBOOK_BYTES,
    NotASourceFile,
    SourceFile,
    file_kind,
    first_line,
    read_bounded,
)
from neuron_env.scan.uses import collect_uses

SCAN_ERROR = "scan-error"
# Files read as the shell lines they hold, same lines and columns (.containers).
SHELL_VIEWS: dict[str, Callable[[str], str]] = {
    "shell": lambda text: text,
    "dockerfile": dockerfile_as_shell,
    "yaml": yaml_as_shell,
}
# Never source of the user's program: caches, dependencies, virtual environments (also any
# directory holding a pyvenv.cfg) and hidden directories such as .git and .tox.
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules", "site-packages"})
PYTHON_SUFFIXES = frozenset({".py", ".pyw", ".pyi"})
NOTEBOOK_SUFFIXES = frozenset({".ipynb"})
SHELL_SUFFIXES = frozenset({".sh", ".bash", ".sbatch", ".slurm"})
YAML_SUFFIXES = frozenset({".yaml", ".yml"})
WALKED_SUFFIXES = frozenset({".py", ".ipynb", *SHELL_SUFFIXES, *YAML_SUFFIXES})


@frozen
class ScanOptions:
    root: Path  # reports name files relative to it (SARIF: relative to the repository root)
    exclude: tuple[str, ...] = ()  # globs matched against the relative path and the name


def scan(paths: Sequence[Path], rules: RuleSet, options: ScanOptions) -> ScanReport:
    """Scan ``paths`` (files, or directories walked for ``*.py``) with ``rules``."""
    files = list(scanned_files(paths, options))
    findings = [f for each in files for f in _scan_one(each, rules)]
    return ScanReport(
        rules=rules,
        root=str(options.root),
        files=tuple(each.display for each in files),
        findings=tuple(sorted(findings, key=lambda f: f.sort_key)),
        outside=frozenset(each.display for each in files if each.outside),
    )


def _scan_one(each: ScannedFile, rules: RuleSet) -> list[Finding]:
    if each.unreadable:  # a folder the walk could not list: what it holds was not judged
        problem = f"cannot read the folder: {each.unreadable}; nothing in it was scanned"
        return [_scan_error(rules, each.path, each.display, problem)]
    return scan_file(each.path, each.display, rules)


def scan_file(path: Path, display: str, rules: RuleSet) -> list[Finding]:
    """The findings of one file, or one ``scan-error`` finding saying why it could not be read."""
    try:
        notebook = path.suffix.lower() in NOTEBOOK_SUFFIXES
        raw = read_bounded(path, MAX_NOTEBOOK_BYTES if notebook else MAX_FILE_BYTES)
        kind = kind_of(path, raw.split(b"\n", 1)[0])
        if kind == "notebook":
            return _scan_notebook(path, display, raw, rules)
        if kind in SHELL_VIEWS:
            # Shell, Dockerfile and YAML have no encoding declaration: a stray non-UTF-8 byte (in
            # a comment or a value) becomes U+FFFD, one character, so lines and columns hold and
            # the rest of the file is still read (Python's rule would refuse the whole file).
            source = SourceFile(path, display, raw.decode("utf-8", "replace"), "utf-8")
            if not rules.may_match(source.text):
                return []
            shell_text = SHELL_VIEWS[kind](source.text)
            return shell_findings(SourceFile(path, display, shell_text), rules)
        return _scan_python(SourceFile.decode(path, display, raw), rules)
    except NotASourceFile as exc:
        return [_scan_error(rules, path, display, str(exc))]
    except OSError as exc:
        return [_scan_error(rules, path, display, f"cannot read the file: {exc.strerror}")]
    except UnicodeDecodeError as exc:
        problem = f"not valid {exc.encoding} text at byte {exc.start}"
        return [_scan_error(rules, path, display, problem)]
    except SyntaxError as exc:
        return [_syntax_error(rules, path, display, exc)]
    except (ValueError, RecursionError) as exc:  # NUL bytes; absurdly deep nesting
        return [_scan_error(rules, path, display, f"cannot be parsed: {exc}")]


def kind_of(path: Path, first: bytes) -> str:
    """``python``, ``notebook``, ``shell``, ``dockerfile`` or ``yaml``, by the name, else by
    the shebang."""
    suffix = path.suffix.lower()
    if suffix in NOTEBOOK_SUFFIXES:
        return "notebook"
    if suffix in SHELL_SUFFIXES:
        return "shell"
    if suffix in YAML_SUFFIXES:
        return "yaml"
    if is_dockerfile(path.name):
        return "dockerfile"
    if suffix not in PYTHON_SUFFIXES and is_shell_shebang(first):
        return "shell"
    return "python"


def _scan_python(source: SourceFile, rules: RuleSet) -> list[Finding]:
    tree = source.parse()
    if not rules.may_match(source.text):
        return []  # parsed (a syntax error is still reported), but nothing to look for
    return detect(collect_uses(tree), rules, source)


def _scan_notebook(path: Path, display: str, raw: bytes, rules: RuleSet) -> list[Finding]:
    def python(source: SourceFile) -> list[Finding]:
        return _scan_python(source, rules)

    def shell(source: SourceFile) -> list[Finding]:
        return shell_findings(source, rules)

    def syntax_error(exc: SyntaxError) -> Finding:
        return _syntax_error(rules, path, display, exc)

    def unreadable(problem: str) -> Finding:
        return _scan_error(rules, path, display, problem)

    return scan_notebook(path, display, read_cells(raw), python, shell, syntax_error, unreadable)


def _syntax_error(rules: RuleSet, path: Path, display: str, exc: SyntaxError) -> Finding:
    where = Span(exc.lineno or 1, exc.offset or 1, exc.lineno or 1, exc.offset or 1)
    problem = f"not valid Python {_python()}: {exc.msg}"
    return _scan_error(rules, path, display, problem, where)


def _python() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def _scan_error(
    rules: RuleSet, path: Path, display: str, problem: str, span: Span | None = None
) -> Finding:
    source = SourceFile(path, display, "")
    return finding(rules.get(SCAN_ERROR), source, span or Span(1, 1, 1, 1), problem)


# --- which files ----------------------------------------------------------------------------


@frozen
class ScannedFile:
    path: Path
    display: str
    outside: bool = False  # reached through a symbolic link that leaves the scanned tree
    unreadable: str = ""  # a folder that could not be listed: why (Permission denied)


def scanned_files(paths: Iterable[Path], options: ScanOptions) -> Iterator[ScannedFile]:
    """Each file to scan, sorted within directories, each file once."""
    seen: set[Path] = set()
    for path in paths:
        is_dir = _check_argument(path)
        tree = Path(os.path.realpath(path))
        for candidate, refused in _walk(path, options) if is_dir else [(path, "")]:
            display = display_name(candidate, options.root)
            key = Path(os.path.realpath(candidate))
            if key not in seen and not _excluded(display, options.exclude):
                seen.add(key)
                outside = is_dir and not key.is_relative_to(tree)
                yield ScannedFile(candidate, display, outside, refused)


def _check_argument(path: Path) -> bool:
    """True for a directory, False for a regular file; BadInput for anything else."""
    try:
        mode = path.stat().st_mode
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise BadInput(
                f"{path}: a loop of symbolic links (it never reaches a file).",
                hint="Fix or remove the link, or scan the file it should point to.",
            ) from None
        if exc.errno in (errno.ENOENT, errno.ENOTDIR):
            raise BadInput(
                f"{path}: no such file or directory.", hint="Check the PATH arguments."
            ) from None
        raise BadInput(f"{path}: cannot be read ({exc.strerror}).") from None
    if stat.S_ISDIR(mode):
        return True
    if stat.S_ISREG(mode):
        return False
    raise BadInput(
        f"{path}: {file_kind(mode)}, not a source file or directory; scan reads files it can "
        "read to the end, so it does not read pipes, devices or process substitutions.",
        hint=f"Save the code to a file first, then run: {command('scan')} FILE",
    )


def _walk(directory: Path, options: ScanOptions) -> Iterator[tuple[Path, str]]:
    """Each file to scan under ``directory`` with "", and each folder that could not be listed
    with why: os.walk passes over such a folder in silence, and a gate would pass on it."""
    refused: list[OSError] = []
    for current, dirs, files in os.walk(directory, onerror=refused.append):
        yield from _refused(refused)
        here = Path(current)
        dirs[:] = sorted(d for d in dirs if _wanted_dir(here / d, options))
        for name in sorted(files):
            path = here / name
            if (
                path.suffix in WALKED_SUFFIXES
                or is_dockerfile(name)
                or (not path.suffix and is_shell_shebang(first_line(path)))
            ):
                yield path, ""
    yield from _refused(refused)


def _refused(errors: list[OSError]) -> Iterator[tuple[Path, str]]:
    while errors:
        exc = errors.pop(0)
        yield Path(exc.filename), exc.strerror or str(exc)


def _wanted_dir(path: Path, options: ScanOptions) -> bool:
    name = path.name
    if name.startswith(".") or name in SKIPPED_DIRS or _is_venv(path):
        return False
    return not _excluded(display_name(path, options.root), options.exclude)


def _is_venv(path: Path) -> bool:
    """A virtual environment (its pyvenv.cfg), never walked; a folder that cannot be looked
    into is walked, so that the walk names it as not read."""
    try:
        return (path / "pyvenv.cfg").exists()
    except OSError:
        return False


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
