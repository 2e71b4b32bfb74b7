"""The ``neuron-env`` command line: thin adapters from options to the library.

Each command module registers its commands on :data:`app`; heavy imports (torch, boto3, jinja2, the
matrix itself) happen inside the commands so that ``neuron-env --help`` starts fast.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import Annotated

import typer

from neuron_env import __version__
from neuron_env.cli import cloud as cloud_commands
from neuron_env.cli import device as device_commands
from neuron_env.cli import doctor as doctor_commands
from neuron_env.cli import evaluate as evaluate_commands
from neuron_env.cli import fleet as fleet_commands
from neuron_env.cli import image as image_commands
from neuron_env.cli import install as install_commands
from neuron_env.cli import matrix as matrix_commands
from neuron_env.cli import preflight as preflight_commands
from neuron_env.cli import scan as scan_commands
from neuron_env.cli._common import Settings, print_error
from neuron_env.errors import NeuronEnvError

app = typer.Typer(
    name="neuron-env",
    help="Provision and validate PyTorch environments for AWS Trainium (TorchNeuron).\n\n"
    "Examples:\n\n"
    "  neuron-env doctor\n\n"
    "  neuron-env matrix list\n\n"
    "  neuron-env matrix resolve --torch 2.14 --python 3.12 --os ubuntu-26.04\n\n"
    "  neuron-env install --torch 2.14 --venv ./neuron-venv --dry-run\n\n"
    "  neuron-env scan train.py src/",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: no rich/markdown import on --help
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.command("doctor")(doctor_commands.doctor)
app.command("facts")(doctor_commands.facts)
app.command("preflight")(preflight_commands.preflight)
app.add_typer(fleet_commands.app, name="fleet")
app.add_typer(matrix_commands.app, name="matrix")
app.command("install")(install_commands.install)
app.command("download")(install_commands.download)
device_commands.register(app)
app.command("scan")(scan_commands.scan)
evaluate_commands.register(app)
app.add_typer(cloud_commands.launch_template_app, name="launch-template")
app.add_typer(cloud_commands.ami_app, name="ami")
app.add_typer(image_commands.image_app, name="image")


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"neuron-env {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    matrix_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--matrix-dir",
            metavar="DIR",
            help="Extra directory of matrix files (newer releases); may repeat. "
            "Also read from $NEURON_ENV_MATRIX_DIR.",
            file_okay=False,
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks for errors.", envvar="NEURON_ENV_DEBUG")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Provision and validate PyTorch environments for AWS Trainium (TorchNeuron)."""
    ctx.obj = Settings(debug=debug, matrix_dirs=list(matrix_dir or []))


def main() -> None:
    """Console-script entry point: run the app, turn expected errors into exit codes."""
    try:
        app()
    except NeuronEnvError as exc:
        if _debug_requested():
            traceback.print_exc()
        print_error(exc)
        sys.exit(exc.exit_code)


def _debug_requested() -> bool:
    return "--debug" in sys.argv[1:] or os.environ.get("NEURON_ENV_DEBUG", "") not in ("", "0")
