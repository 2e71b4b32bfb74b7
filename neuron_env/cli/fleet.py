"""``neuron-env fleet``: collect facts from many hosts and judge them together."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import console, load_matrix
from neuron_env.errors import BadInput

app = typer.Typer(
    help="Validate many Trainium hosts: collect their facts (AWS Systems Manager or any other "
    "way) and judge them together.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

FleetFormatOption = Annotated[
    str, typer.Option("--format", metavar="FORMAT", help="text, json, junit or github.")
]


@app.command("report")
def report(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A directory of facts snapshots.")],
    release: Annotated[
        str | None,
        typer.Option("--release", "-r", metavar="R", help="Judge readiness for this release."),
    ] = None,
    torch: Annotated[
        str | None, typer.Option("--torch", metavar="X.Y", help="Judge against this PyTorch.")
    ] = None,
    output_format: FleetFormatOption = "text",
    output: Annotated[
        Path | None, typer.Option("--output", "-o", metavar="FILE", help="Write the report here.")
    ] = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every host.")] = False,
) -> None:
    """Judge every snapshot in DIR with the doctor's checks and summarise the fleet.

    Hosts are grouped by failing check, with the fix for each group. Exit 0 when every host is
    ready, 1 when any is not or has no verdict.

    Examples:

      neuron-env fleet report snapshots/

      neuron-env fleet report snapshots/ --release 2.34.0 --torch 2.14   # ready for 2.34?
    """
    from neuron_env.fleet.report import report_fleet
    from neuron_env.report import FORMATS
    from neuron_env.report.fleet import print_fleet, render_fleet

    if output_format not in FORMATS:
        raise BadInput(f"--format '{output_format}' is not one of: {', '.join(FORMATS)}.")
    result = report_fleet(load_matrix(ctx), folder, release=release, torch=torch)
    if output is not None:
        _write(output, render_fleet(result, output_format, verbose=verbose))
    elif output_format == "text":
        print_fleet(console(), result, verbose=verbose)
    else:
        sys.stdout.write(render_fleet(result, output_format, verbose=verbose))
    raise typer.Exit(result.exit_code)


def _write(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise BadInput(f"Cannot write {path}: {exc.strerror}.") from None
