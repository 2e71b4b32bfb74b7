"""``neuron-env install`` and ``neuron-env download``: option parsing only.

The work happens in :mod:`neuron_env.install.workflow` and the terminal's part in
:mod:`neuron_env.install.output`, both imported inside the commands so that ``neuron-env --help``
stays fast.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, project_defaults, settings
from neuron_env.cli.options import (
    DocumentFormatOption,
    DryRunOption,
    IndexUrlOption,
    InstallBackendOption,
    InstallOsOption,
    InstallPythonOption,
    InstallQuietOption,
    InstallSysrootOption,
    InstallTorchOption,
    JsonOption,
    NeuronIndexOption,
    NewVenvPythonVersionOption,
    NoConfigOption,
    PytorchIndexOption,
    ReleaseOption,
    RequirementOption,
    WheelhousePythonVersionOption,
    YesOption,
)
from neuron_env.output.formats import DocumentFormat

# The options only this command takes (the shared ones are in cli/options.py).

PackagesArgument = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[PACKAGE]...",
        help="Your own packages (PEP 508, e.g. 'transformers>=4.50' torchtitan-neuron): Neuron "
        "ones at the release's version from the Neuron index, the rest from the default index "
        "with the release's pins as constraints.",
        show_default=False,
    ),
]
LogOption = Annotated[
    Path | None,
    typer.Option(
        "--log",
        metavar="FILE",
        help="Write the backend's output here "
        "(default: $XDG_STATE_HOME/neuron-env/logs/, i.e. ~/.local/state/neuron-env/logs/).",
        dir_okay=False,
    ),
]


def install(
    ctx: typer.Context,
    packages: PackagesArgument = None,
    torch: InstallTorchOption = None,
    requirement: RequirementOption = None,
    release: ReleaseOption = None,
    venv: Annotated[
        Path | None,
        typer.Option(
            "--venv",
            metavar="DIR",
            help="Environment to create or upgrade (default: the active one).",
        ),
    ] = None,
    python: InstallPythonOption = None,
    python_version: NewVenvPythonVersionOption = None,
    backend: InstallBackendOption = "auto",
    index_url: IndexUrlOption = None,
    neuron_index: NeuronIndexOption = None,
    pytorch_index: PytorchIndexOption = None,
    wheelhouse: Annotated[
        Path | None,
        typer.Option(
            "--wheelhouse",
            metavar="DIR",
            help="Install from this wheelhouse alone ('neuron-env download').",
            file_okay=False,
        ),
    ] = None,
    offline: Annotated[
        bool, typer.Option("--offline", help="Use no network (needs --wheelhouse).")
    ] = False,
    os: InstallOsOption = None,
    allow_unlisted_os: Annotated[
        bool,
        typer.Option(
            "--allow-unlisted-os",
            help="On an OS the release does not list (e.g. Debian 12), install the manylinux "
            "wheels anyway, unsupported, instead of refusing.",
        ),
    ] = False,
    export: Annotated[
        Path | None,
        typer.Option(
            "--export",
            metavar="FILE",
            help="Write a requirements file pinning every package by version and sha256 "
            "('-' for stdout; with --json, the JSON's 'requirements' field), and install nothing.",
            dir_okay=False,
        ),
    ] = None,
    system: Annotated[
        bool,
        typer.Option("--system", help="The apt steps for the release's driver, runtime and tools."),
    ] = False,
    execute: Annotated[
        bool, typer.Option("--execute", help="With --system: run the apt steps (as root).")
    ] = False,
    dry_run: DryRunOption = False,
    yes: YesOption = False,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
    quiet: InstallQuietOption = False,
    log: LogOption = None,
    sysroot: InstallSysrootOption = Path("/"),
    no_config: NoConfigOption = False,
) -> None:
    """Install TorchNeuron into a virtual environment: exact pins, each from its own index.

    torch-neuronx, neuronx-cc and nki come only from the Neuron index, torch only from the
    PyTorch CPU index, everything else from the default index. The environment is built beside
    the target, verified, then swapped in; on any failure nothing changes. Your own packages
    (PACKAGE ..., -r FILE) join the same transaction; none of them can move those pins.

    Examples:

      neuron-env install --torch 2.14 --venv ./neuron-venv --dry-run

      neuron-env install --torch 2.14 --venv ./neuron-venv --python python3.12 --yes

      neuron-env install --torch 2.14 --venv ./neuron-venv torchtitan-neuron -r requirements.txt

      neuron-env install --torch 2.14 --wheelhouse ./wheels --offline --venv ./neuron-venv

      neuron-env install --torch 2.14 --export requirements.txt

      neuron-env install --system --release 2.33.1
    """
    from neuron_env.install import workflow as operation
    from neuron_env.install.output import INSTALL, terminal_display
    from neuron_env.install.plan import Mirrors
    from neuron_env.output.emit import emit

    choice = chosen_format(DocumentFormat, output_format, json)
    shown = not quiet and choice is DocumentFormat.text

    defaults = project_defaults(no_config, say_ignored=True)  # flags win over the project file
    release = release or defaults.release
    torch = torch or (None if system else defaults.torch)  # --system installs no PyTorch
    request = operation.InstallRequest(
        torch=torch, release=release, venv=venv, python=python, backend=backend,
        python_version=python_version,
        mirrors=Mirrors(
            index_url=index_url, neuron_index=neuron_index, pytorch_index=pytorch_index
        ),
        wheelhouse=wheelhouse, offline=offline, os=os, export=export, system=system,
        allow_unlisted_os=allow_unlisted_os,
        execute=execute, dry_run=dry_run, yes=yes, log=log, sysroot=sysroot,
        packages=tuple(packages or ()), requirements=tuple(requirement or ()),
        matrix_dirs=settings(ctx).matrix_dirs,
        display=terminal_display(shown=shown, quiet=quiet, confirm=_confirm),
    )  # fmt: skip
    raise typer.Exit(emit(INSTALL, operation.install(request), choice, quiet=quiet))


def download(
    ctx: typer.Context,
    dest: Annotated[
        Path,
        typer.Option(
            "--dest", "-d", metavar="DIR", help="New or empty directory to fill.", file_okay=False
        ),
    ],
    packages: PackagesArgument = None,
    torch: InstallTorchOption = None,
    requirement: RequirementOption = None,
    release: ReleaseOption = None,
    python_version: WheelhousePythonVersionOption = None,
    os: InstallOsOption = None,
    index_url: IndexUrlOption = None,
    neuron_index: NeuronIndexOption = None,
    pytorch_index: PytorchIndexOption = None,
    dry_run: DryRunOption = False,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
    quiet: InstallQuietOption = False,
    log: LogOption = None,
    sysroot: InstallSysrootOption = Path("/"),
) -> None:
    """Fill a wheelhouse for an air-gapped machine, routed like 'install'.

    The directory gets every wheel, a manifest with their sha256 and a hash-pinned
    requirements.txt; copy it over and run 'neuron-env install --wheelhouse DIR --offline'.

    Example: neuron-env download --torch 2.14 --python-version 3.12 -d ./wheels
    """
    from neuron_env.install import workflow as operation
    from neuron_env.install.output import INSTALL, terminal_display
    from neuron_env.install.plan import Mirrors
    from neuron_env.output.emit import emit

    choice = chosen_format(DocumentFormat, output_format, json)
    shown = not quiet and choice is DocumentFormat.text

    request = operation.DownloadRequest(
        torch=torch, dest=dest, release=release, python_version=python_version, os=os,
        mirrors=Mirrors(
            index_url=index_url, neuron_index=neuron_index, pytorch_index=pytorch_index
        ),
        dry_run=dry_run, log=log, sysroot=sysroot,
        packages=tuple(packages or ()), requirements=tuple(requirement or ()),
        matrix_dirs=settings(ctx).matrix_dirs,
        display=terminal_display(shown=shown, quiet=quiet, confirm=_confirm),
    )  # fmt: skip
    raise typer.Exit(emit(INSTALL, operation.download(request), choice, quiet=quiet))


def _confirm(question: str) -> bool:
    return typer.confirm(question, default=False)
