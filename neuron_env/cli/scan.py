"""``neuron-env scan``: static checks of a user's Python code against a Neuron release."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from neuron_env.cli._common import check_format, console, load_matrix, print_json, write_output
from neuron_env.cli.options import ReleaseOption, ReportOutputOption
from neuron_env.errors import BadInput

if TYPE_CHECKING:
    from rich.console import Console

    from neuron_env.scan import FilePatch, RuleSet, ScanOptions, ScanReport, Severity

FORMATS = ("text", "json", "sarif")


def scan(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(metavar="PATH...", help="Python files, or directories to search for *.py."),
    ] = None,
    release: ReleaseOption = None,
    output_format: Annotated[
        str, typer.Option("--format", metavar="FORMAT", help="text, json or sarif.")
    ] = "text",
    output: ReportOutputOption = None,
    fail_on: Annotated[
        str,
        typer.Option(
            "--fail-on",
            metavar="SEVERITY",
            help="Exit 1 on findings at or above: error, warning or note.",
        ),
    ] = "error",
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            metavar="GLOB",
            help="Skip files and directories matching GLOB (repeatable).",
        ),
    ] = None,
    root: Annotated[
        Path | None,
        typer.Option(
            "--root",
            metavar="DIR",
            help="Report paths relative to DIR (default: the current directory).",
            file_okay=False,
        ),
    ] = None,
    fix: Annotated[
        bool, typer.Option("--fix", help="Rewrite the safe cases; shows a diff first.")
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="With --fix: show the diff, write nothing.")
    ] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="With --fix: write without asking.")
    ] = False,
    list_rules: Annotated[
        bool, typer.Option("--list-rules", help="List the release's rules and exit.")
    ] = False,
) -> None:
    """Find code that needs changes for TorchNeuron: PyTorch/XLA idioms, APIs the release does
    not support, float64, torch.compile options, hard-coded CUDA devices.

    Reads the source only (nothing is imported or run). Exit 0 when no finding is at or above
    --fail-on, 1 when one is, 2 on bad input. A file that cannot be parsed is a 'scan-error'
    finding.

    Examples:

      neuron-env scan train.py src/

      neuron-env scan . --format sarif -o neuron-env.sarif

      neuron-env scan train.py --fix --dry-run
    """
    from neuron_env.scan import SEVERITIES, ScanOptions, rules_for

    _check_choices(output_format, fail_on, fix, dry_run, yes)
    rules = rules_for(load_matrix(ctx).get(release))
    if list_rules:
        _print_rules(rules, output_format)
        return
    if not paths:
        raise BadInput(
            "Give at least one PATH to scan.", hint="Example: neuron-env scan train.py src/"
        )
    options = ScanOptions(root or Path.cwd(), tuple(exclude or ()))
    report = _run(paths, rules, options)
    if fix:
        to_stdout = output_format == "text" and output is None
        report = _fix(
            report, paths, rules, options, apply=not dry_run, yes=yes, to_stdout=to_stdout
        )
    severity = next(s for s in SEVERITIES if s == fail_on)
    _emit(report, output_format, output, severity)
    raise typer.Exit(report.exit_code(severity))


def _check_choices(output_format: str, fail_on: str, fix: bool, dry_run: bool, yes: bool) -> None:
    from neuron_env.scan import SEVERITIES

    check_format(output_format, FORMATS)
    if fail_on not in SEVERITIES:
        raise BadInput(f"--fail-on '{fail_on}' is not one of: {', '.join(SEVERITIES)}.")
    if (dry_run or yes) and not fix:
        raise BadInput(
            "--dry-run and --yes only apply to --fix.",
            hint="Example: neuron-env scan train.py --fix --dry-run",
        )


def _run(paths: list[Path], rules: RuleSet, options: ScanOptions) -> ScanReport:
    from neuron_env.scan import scan as scan_paths

    return scan_paths(paths, rules, options)


# --- --fix ----------------------------------------------------------------------------------


def _fix(
    report: ScanReport,
    paths: list[Path],
    rules: RuleSet,
    options: ScanOptions,
    *,
    apply: bool,
    yes: bool,
    to_stdout: bool,
) -> ScanReport:
    """Show the diff, write it when confirmed, and return the report of what is left.

    With a JSON or SARIF report on stdout, the diff and the question go to stderr.
    """
    from neuron_env.scan import plan_fixes
    from neuron_env.scan.fix import OLDEST_PYTHON

    out = console(stderr=not to_stdout)
    python = min(OLDEST_PYTHON, rules.oldest_python)
    planned = plan_fixes(report.findings, outside=report.outside, python=python)
    for refused in (p for p in planned if p.problem):
        what = f"Not fixed: {refused.display}: {refused.problem}."
        out.print(escape(what), soft_wrap=True)
    patches = [p for p in planned if not p.problem and p.fixed]
    if not patches:
        out.print("Nothing to fix: no finding has an automatic fix.\n")
        return report
    for patch in patches:
        _print_diff(out, patch)
    fixes = sum(len(p.fixed) for p in patches)
    if not apply:
        out.print("Dry run: nothing was written.\n")
        return report
    if not _confirmed(out, _fixes(fixes, len(patches)), yes=yes, to_stdout=to_stdout):
        return report
    written = [patch for patch in patches if _write(out, patch)]
    if written:
        out.print(f"Applied {_fixes(sum(len(p.fixed) for p in written), len(written))}.\n")
    return _run(paths, rules, options)


def _write(out: Console, patch: FilePatch) -> bool:
    from neuron_env.scan.fix import FileChanged

    try:
        patch.write()
    except FileChanged as exc:
        out.print(f"Not written: {escape(exc.message)} {escape(exc.hint or '')}", soft_wrap=True)
        return False
    return True


def _confirmed(out: Console, what: str, *, yes: bool, to_stdout: bool) -> bool:
    if yes:
        return True
    if not sys.stdin.isatty():
        out.print("Not written: no terminal to confirm on. Pass --yes to write the changes.\n")
        return False
    if typer.confirm(f"Apply {what}?", default=False, err=not to_stdout):
        return True
    out.print("Nothing was written.\n")
    return False


def _fixes(fixes: int, files: int) -> str:
    from neuron_env.wording import plural

    return f"{fixes} fix{'' if fixes == 1 else 'es'} to {plural(files, 'file')}"


def _print_diff(out: Console, patch: FilePatch) -> None:
    from rich.text import Text

    for line in patch.diff().splitlines():
        style = "bold" if line.startswith(("---", "+++")) else ""
        style = style or {"+": "green", "-": "red", "@": "cyan"}.get(line[:1], "")
        out.print(Text(line, style=style), soft_wrap=True)
    out.print()


# --- output ---------------------------------------------------------------------------------


def _emit(report: ScanReport, output_format: str, output: Path | None, fail_on: Severity) -> None:
    from neuron_env.scan.render_json import sarif_document, scan_payload
    from neuron_env.serialize import envelope

    if output_format == "text" and output is None:
        _print_text(console(), report)  # straight to the terminal, in colour
        return
    if output_format == "text":
        text = _plain_text(report)
    elif output_format == "json":
        text = json.dumps(envelope("scan", scan_payload(report, fail_on)), indent=2) + "\n"
    else:
        document = sarif_document(report)
        _say_what_was_folded(document["runs"][0]["properties"])
        text = json.dumps(document, indent=2) + "\n"
    if output is None:
        sys.stdout.write(text)
    else:
        write_output(output, text)


def _say_what_was_folded(properties: dict[str, object]) -> None:
    from neuron_env.scan.render_json import SARIF_RESULT_LIMIT

    folded = properties.get("foldedResults")
    if folded:
        console(stderr=True).print(
            f"SARIF: {folded:,} findings were folded into one result per rule to keep the run "
            f"under GitHub's {SARIF_RESULT_LIMIT:,}-result limit (properties.folded counts them; "
            "--format json lists them all).",
            soft_wrap=True,
        )


def _print_text(out: Console, report: ScanReport) -> None:
    from neuron_env.scan.render_text import print_report

    print_report(out, report)


def _plain_text(report: ScanReport) -> str:
    from neuron_env.scan.render_text import render_report

    return render_report(report)


def _print_rules(rules: RuleSet, output_format: str) -> None:
    from rich.markup import escape
    from rich.table import Table
    from rich.text import Text

    from neuron_env.scan.render_json import rules_json

    if output_format != "text":
        print_json("scan-rules", {"release": rules.release, "rules": rules_json(rules)})
        return
    table = Table("Rule", "Severity", "From", "What it finds", show_edge=False, pad_edge=False)
    for rule in rules.rules:
        title = Text(rule.title)
        if not rule.confirmed:
            title.append(" (unconfirmed)", style="yellow")
        table.add_row(rule.id, rule.severity, rule.origin, title)
    out = console()
    out.print(f"Rules of neuron-env scan for Neuron {rules.release}:")
    out.print(table)
    out.print("\nDocs:")
    width = max(len(rule.id) for rule in rules.rules)
    for rule in rules.rules:
        out.print(f"  {rule.id:<{width}}  {escape(rule.help_uri)}", soft_wrap=True)
