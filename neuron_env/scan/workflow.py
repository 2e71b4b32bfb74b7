"""``scan`` (and ``scan --fix``, ``scan --list-rules``): a release's rules run over source code.

The fix workflow lives here: scan, plan the patches, show them (``FixReview.planned``), ask when
nothing said yes (``FixReview.confirm``), write each patch atomically after re-reading its file
(a file that changed since the scan is left alone), say what was written, and scan again so the
report is of what is left. What is shown and how the question is asked is the caller's
(:class:`FixReview`); this module never prints.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from neuron_env.errors import BadInput, Interrupted
from neuron_env.frozen import frozen

if TYPE_CHECKING:
    from neuron_env.scan import FilePatch, RuleSet, ScanOptions, ScanReport, Severity
    from neuron_env.scan.fix import FileChanged


@frozen(kw_only=True)
class ScanRequest:
    """Which files, against which release's rules, failing at which severity, fixed or not."""

    paths: Sequence[Path] = ()
    matrix_dirs: Sequence[Path] = ()
    release: str | None = None
    # Findings' paths are relative to it (None: the current directory, or when a path lies outside
    # it, the folder that holds every path): SARIF names each file relative to %SRCROOT%.
    root: Path | None = None
    exclude: Sequence[str] = ()
    fail_on: str = "error"
    fix: bool = False
    dry_run: bool = False
    yes: bool = False
    list_rules: bool = False


@frozen
class FixPlan:
    """The patches ``--fix`` would write, and the files it refuses to touch (with why)."""

    patches: tuple[FilePatch, ...]
    refused: tuple[FilePatch, ...]
    dry_run: bool


@frozen
class FixOutcome:
    """What a confirmed ``--fix`` wrote, and the files that changed under it (not written)."""

    written: tuple[FilePatch, ...]
    not_written: tuple[FileChanged, ...]


class FixReview(Protocol):
    """The caller's side of ``--fix``: it shows, it asks, it says."""

    def planned(self, plan: FixPlan) -> None:
        """Show the plan (the diffs), before anything is written."""

    def confirm(self, plan: FixPlan) -> bool:
        """Whether to write the plan; asked only when it has patches, is no dry run and no
        ``--yes`` was given."""

    def written(self, outcome: FixOutcome) -> None:
        """Say what was written and what was not."""


@frozen
class ScanResult:
    """The report (after ``--fix``: of what is left) and the severity that fails it."""

    report: ScanReport
    fail_on: Severity

    @property
    def exit_code(self) -> int:
        return self.report.exit_code(self.fail_on)


@frozen
class RuleListing:
    """``scan --list-rules``: the release's rules."""

    rules: RuleSet
    exit_code: int = 0


def run_scan(request: ScanRequest, review: FixReview | None = None) -> ScanResult | RuleListing:
    """Scan ``request.paths`` (fixing them when asked, through ``review``), or list the rules."""
    from neuron_env.matrix import load_matrix
    from neuron_env.scan import SEVERITIES, ScanOptions, rules_for

    fail_on = _check(request)
    rules = rules_for(load_matrix(list(request.matrix_dirs)).get(request.release))
    if request.list_rules:
        return RuleListing(rules)
    paths = request.paths or (Path(),)  # "." like ruff and flake8: the current folder
    options = ScanOptions(request.root or default_root(paths), tuple(request.exclude))
    report = _scan(paths, rules, options)
    if not report.files:
        raise _nothing_to_scan(paths, excluded=bool(request.exclude))
    if outside := [name for name in report.files if name.startswith("/")]:
        raise _outside_root(outside[0], options.root)
    if request.fix:
        if review is None:
            raise ValueError("scan --fix needs a FixReview to show the diff and ask")
        if _fix(report, rules, request, review):
            report = _scan(paths, rules, options)
    return ScanResult(report, next(s for s in SEVERITIES if s == fail_on))


def _nothing_to_scan(paths: Sequence[Path], *, excluded: bool) -> BadInput:
    """A scan of no file judged nothing: saying "no findings" would pass a gate on a wrong path."""
    where = ", ".join(_shown(p) for p in paths)
    from neuron_env.invocation import command

    example = command("scan", "train.py", "src/")
    hint = f"Give the files or folders that hold your code, e.g. {example}"
    if excluded:
        hint += ", or check that --exclude leaves some of them"
    return BadInput(f"No Python files under {where}.", hint=hint + ".")


def default_root(paths: Sequence[Path]) -> Path:
    """The current directory when it holds every path, else the deepest folder that does."""
    cwd = Path.cwd()
    folders = [os.path.normpath(p.absolute() if _is_dir(p) else p.absolute().parent) for p in paths]
    if all(_within(folder, cwd) for folder in folders):
        return cwd
    return Path(os.path.commonpath(folders))


def _is_dir(path: Path) -> bool:
    """``path.is_dir()``; False where it cannot be looked at (scan then says why, exit 2)."""
    try:
        return path.is_dir()
    except OSError:
        return False


def _within(folder: str, root: Path) -> bool:
    top = os.path.normpath(root.absolute())
    return os.path.commonpath([folder, top]) == top


def _outside_root(name: str, root: Path) -> BadInput:
    """A file outside --root would be named by an absolute path, which no code-scanning service
    can place in the repository: refused rather than reported unplaceably."""
    return BadInput(
        f"{name} is outside --root {root}: reports name each file relative to the root.",
        hint="Give a --root that holds every path you scan, or leave --root out.",
    )


def _shown(path: Path) -> str:
    """The path as given, and where that is when it was relative (``.`` alone says little)."""
    return str(path) if path.is_absolute() else f"{path} ({path.absolute()})"


def _check(request: ScanRequest) -> str:
    from neuron_env.scan import SEVERITIES

    if request.fail_on not in SEVERITIES:
        raise BadInput(f"--fail-on '{request.fail_on}' is not one of: {', '.join(SEVERITIES)}.")
    if (request.dry_run or request.yes) and not request.fix:
        raise BadInput(
            "--dry-run and --yes only apply to --fix.",
            hint=f"Preview the fixes with '{_preview(request)}'.",
        )
    return request.fail_on


def _preview(request: ScanRequest) -> str:
    """The refused command with ``--fix``: the same files, shown as a diff, nothing written."""
    from neuron_env.invocation import command

    return command("scan", *(str(p.absolute()) for p in request.paths), "--fix", "--dry-run")


def _scan(paths: Sequence[Path], rules: RuleSet, options: ScanOptions) -> ScanReport:
    from neuron_env.scan import scan

    return scan(list(paths), rules, options)


def _fix(report: ScanReport, rules: RuleSet, request: ScanRequest, review: FixReview) -> bool:
    """Plan, show, ask and write; True when the files were (or were to be) written."""
    from neuron_env.scan import plan_fixes
    from neuron_env.scan.fix import OLDEST_PYTHON, FileChanged

    python = min(OLDEST_PYTHON, rules.oldest_python)
    planned = plan_fixes(report.findings, outside=report.outside, python=python)
    plan = FixPlan(
        patches=tuple(p for p in planned if not p.problem and p.fixed),
        refused=tuple(p for p in planned if p.problem),
        dry_run=request.dry_run,
    )
    review.planned(plan)
    if not plan.patches or plan.dry_run:
        return False
    if not request.yes and not review.confirm(plan):
        return False
    written: list[FilePatch] = []
    not_written: list[FileChanged] = []
    try:
        for patch in plan.patches:
            try:
                patch.write()  # re-reads the file first: one that changed since the scan is kept
            except FileChanged as exc:
                not_written.append(exc)
            else:
                written.append(patch)
    except KeyboardInterrupt:
        raise _interrupted_fix(plan.patches) from None
    review.written(FixOutcome(tuple(written), tuple(not_written)))
    return True


def _interrupted_fix(patches: Sequence[FilePatch]) -> Interrupted:
    """Each file is written whole or not at all; say which ones the interrupt let through (read
    back from the disk, which knows better than the loop that was interrupted)."""
    written = [p for p in patches if p.landed()]
    names = ", ".join(p.display for p in written) or "none"
    return Interrupted(
        f"Interrupted after {len(written)} of {len(patches)} files were fixed ({names}); "
        "every file is either as it was or completely fixed, none is half-written.",
        hint="Run the same command again to fix the rest.",
    )
