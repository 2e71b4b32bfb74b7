"""``neuron-env scan``: static checks of a user's Python code against a Neuron release."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, console, settings
from neuron_env.cli.options import (
    FixDryRunOption,
    FixYesOption,
    RedactOption,
    ReleaseOption,
    ReportOutputOption,
    format_option,
)
from neuron_env.output.formats import ScanFormat


def scan(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            metavar="[PATH...]",
            help="Python files, or directories to search for *.py (default: the current folder).",
        ),
    ] = None,
    release: ReleaseOption = None,
    output_format: Annotated[str, format_option(ScanFormat, "text, json or sarif.")] = "text",
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
            help=(
                "Report paths relative to DIR (default: the current directory, or the folder"
                " holding every PATH when one is outside it)."
            ),
            file_okay=False,
        ),
    ] = None,
    fix: Annotated[
        bool, typer.Option("--fix", help="Rewrite the safe cases; shows a diff first.")
    ] = False,
    dry_run: FixDryRunOption = False,
    yes: FixYesOption = False,
    list_rules: Annotated[
        bool, typer.Option("--list-rules", help="List the release's rules and exit.")
    ] = False,
    redact: RedactOption = False,
) -> None:
    """Find code that needs changes for TorchNeuron: PyTorch/XLA idioms, APIs the release does
    not support, float64, torch.compile options, hard-coded CUDA devices.

    Reads the source only (nothing is imported or run). Exit 0 when no finding is at or above
    --fail-on, 1 when one is, 2 on bad input (also paths without any Python file). A file that
    cannot be parsed is a 'scan-error' finding.

    Examples:

      neuron-env scan train.py src/

      neuron-env scan . --format sarif -o neuron-env.sarif

      neuron-env scan train.py --fix --dry-run

      neuron-env scan . --format sarif --redact -o neuron-env.sarif
    """
    from neuron_env.output.emit import emit
    from neuron_env.scan.output import RULES, SCAN, FixConsole
    from neuron_env.scan.workflow import RuleListing, ScanRequest, run_scan

    choice = chosen_format(ScanFormat, output_format)
    request = ScanRequest(
        paths=tuple(paths or ()),
        matrix_dirs=settings(ctx).matrix_dirs,
        release=release,
        root=root,
        exclude=tuple(exclude or ()),
        fail_on=fail_on,
        fix=fix,
        dry_run=dry_run,
        yes=yes,
        list_rules=list_rules,
    )
    to_stdout = output_format == "text" and output is None  # --fix's diffs go with the report
    review = FixConsole(console(stderr=not to_stdout), ask=lambda q: _ask(q, to_stdout))
    result = run_scan(request, review)
    if isinstance(result, RuleListing):
        raise typer.Exit(emit(RULES, result, choice, output))
    if redact:  # the paths and the code quoted: the user's name, keys, tokens, addresses
        from neuron_env.redact_text import local_redactor, redact_object

        result = redact_object(result, local_redactor())
    raise typer.Exit(emit(SCAN, result, choice, output))


def _ask(question: str, to_stdout: bool) -> bool | None:
    """The person's answer; None when there is no terminal to ask on."""
    if not sys.stdin.isatty():
        return None
    return typer.confirm(question, default=False, err=not to_stdout)
