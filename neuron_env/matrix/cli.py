"""``neuron-env matrix``: list, show, resolve, diff and validate support-matrix releases."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, settings
from neuron_env.cli.options import (
    AnyInstanceTypeOption,
    DeprecatedPythonOption,
    DocumentFormatOption,
    JsonOption,
    NeuronIndexOption,
    PytorchIndexOption,
    ReleaseOption,
    RequestTimeoutOption,
    ResolveOsOption,
    ResolvePythonVersionOption,
    TorchOption,
)
from neuron_env.errors import BadInput
from neuron_env.output.formats import DocumentFormat

app = typer.Typer(
    help="The versioned support matrix: which torch, torch-neuronx, Python, OS and instance "
    "go together, per Neuron release.",
    no_args_is_help=True,
    rich_markup_mode=None,  # plain click help: no rich/markdown import on --help
)


@app.command("list")
def list_releases(
    ctx: typer.Context, json: JsonOption = False, output_format: DocumentFormatOption = "text"
) -> None:
    """List the Neuron releases neuron-env knows, newest last.

    Example: neuron-env matrix list --json
    """
    from neuron_env.matrix.commands.output import LIST
    from neuron_env.matrix.commands.workflow import MatrixRequest, list_releases
    from neuron_env.output.emit import emit

    listed = list_releases(MatrixRequest(matrix_dirs=settings(ctx).matrix_dirs))
    raise typer.Exit(emit(LIST, listed, chosen_format(DocumentFormat, output_format, json)))


@app.command("show")
def show(
    ctx: typer.Context,
    release: ReleaseOption = None,
    sources: Annotated[bool, typer.Option("--sources", help="Also list every source URL.")] = False,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
) -> None:
    """Show everything the matrix knows about one release.

    Example: neuron-env matrix show --release 2.33.0
    """
    from neuron_env.matrix.commands.output import SHOW
    from neuron_env.matrix.commands.workflow import MatrixRequest, show_release
    from neuron_env.output.emit import emit

    request = MatrixRequest(matrix_dirs=settings(ctx).matrix_dirs, release=release)
    choice = chosen_format(DocumentFormat, output_format, json)
    raise typer.Exit(emit(SHOW, show_release(request), choice, sources=sources))


@app.command("resolve")
def resolve(
    ctx: typer.Context,
    torch: TorchOption,
    python_version: ResolvePythonVersionOption = None,
    os: ResolveOsOption = None,
    arch: Annotated[
        str | None, typer.Option("--arch", metavar="ARCH", help="CPU architecture, e.g. x86_64.")
    ] = None,
    instance_type: AnyInstanceTypeOption = None,
    release: ReleaseOption = None,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
    python: DeprecatedPythonOption = None,
) -> None:
    """Resolve a request to exact pins, the index each must come from, and notes.

    Exits 2 when the combination is unsupported, naming what is supported.

    Example: neuron-env matrix resolve --torch 2.14 --python-version 3.12 --os ubuntu-26.04 --json
    """
    from neuron_env.matrix import Request
    from neuron_env.matrix.commands.output import RESOLVE
    from neuron_env.matrix.commands.workflow import ResolveRequest
    from neuron_env.matrix.commands.workflow import resolve as resolve_request
    from neuron_env.output.emit import emit

    if python is not None and python_version is not None and python != python_version:
        raise BadInput(
            f"--python {python} and --python-version {python_version} disagree: give only "
            "--python-version (--python X.Y is its deprecated spelling)."
        )
    wanted = Request(
        torch=torch,
        python=python_version or python,
        os=os,
        arch=arch,
        instance_type=instance_type,
        release=release,
    )
    request = ResolveRequest(wanted=wanted, matrix_dirs=settings(ctx).matrix_dirs)
    choice = chosen_format(DocumentFormat, output_format, json)
    raise typer.Exit(emit(RESOLVE, resolve_request(request), choice))


@app.command("diff")
def diff(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(help="The earlier release, e.g. 2.33.0.")],
    new: Annotated[str, typer.Argument(help="The later release, e.g. 2.34.0.")],
    notes: Annotated[
        bool, typer.Option("--notes", help="Also compare notes and summaries (prose).")
    ] = False,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
) -> None:
    """Show what changed between two releases.

    Example: neuron-env matrix diff 2.33.1 2.34.0
    """
    from neuron_env.matrix.commands.output import DIFF
    from neuron_env.matrix.commands.workflow import DiffRequest
    from neuron_env.matrix.commands.workflow import diff as diff_releases
    from neuron_env.output.emit import emit

    request = DiffRequest(matrix_dirs=settings(ctx).matrix_dirs, old=old, new=new, prose=notes)
    choice = chosen_format(DocumentFormat, output_format, json)
    raise typer.Exit(emit(DIFF, diff_releases(request), choice))


@app.command("validate")
def validate(
    files: Annotated[list[Path], typer.Argument(help="Matrix files to check.", dir_okay=False)],
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
) -> None:
    """Check matrix files with the same strict rules neuron-env applies when loading them.

    Exits 0 when every file is valid and 2 when any is not.

    Example: neuron-env matrix validate ./my-matrices/2.35.0.toml
    """
    from neuron_env.matrix.commands.output import VALIDATE
    from neuron_env.matrix.commands.workflow import ValidateRequest
    from neuron_env.matrix.commands.workflow import validate as validate_files
    from neuron_env.output.emit import emit

    checked = validate_files(ValidateRequest(files=tuple(files)))
    raise typer.Exit(emit(VALIDATE, checked, chosen_format(DocumentFormat, output_format, json)))


@app.command("verify")
def verify(
    ctx: typer.Context,
    release: ReleaseOption = None,
    neuron_index: NeuronIndexOption = None,
    pytorch_index: PytorchIndexOption = None,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
    write: Annotated[
        Path | None,
        typer.Option(
            "--write",
            metavar="DIR",
            help="Write an overlay release file into DIR, for --matrix-dir or "
            "$NEURON_ENV_MATRIX_DIR.",
        ),
    ] = None,
    timeout: RequestTimeoutOption = 15.0,
) -> None:
    """Check a release file against the package indexes themselves.

    Reads the simple pages of every package the release pins and reports each fact as
    confirmed, contradicted (with what the index shows) or unknown. Exits 1 when a fact is
    contradicted or an index cannot be read.

    Example: neuron-env matrix verify --release 2.34.0 --write ./matrix-overlay
    """
    from neuron_env.matrix.commands import verify_output as views
    from neuron_env.matrix.commands.verify import VerifyRequest, verify_release
    from neuron_env.output.emit import emit

    request = VerifyRequest(
        matrix_dirs=settings(ctx).matrix_dirs,
        release=release,
        neuron_index=neuron_index,
        pytorch_index=pytorch_index,
        write=write,
        timeout=timeout,
        progress=views.print_progress,
    )
    outcome = verify_release(request)
    choice = chosen_format(DocumentFormat, output_format, json)
    raise typer.Exit(emit(views.VERIFY, outcome, choice))
