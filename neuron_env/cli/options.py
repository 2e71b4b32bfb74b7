"""Options that several commands take, declared once so that their flags and help agree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import seconds_at_least

PythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Target interpreter to inspect (default: the active virtualenv, else this one).",
        dir_okay=False,
    ),
]
ProbeTimeoutOption = Annotated[
    float,
    typer.Option(
        "--probe-timeout",
        callback=seconds_at_least(0.5),
        metavar="SECONDS",
        help="Give each probe at most this many seconds.",
    ),
]
SysrootOption = Annotated[
    Path,
    typer.Option(
        "--sysroot",
        metavar="DIR",
        help="Read the host through this directory (e.g. /host from a container).",
        file_okay=False,
    ),
]

# launch-template, ami and image render: the host (or image) being described.
HostTorchOption = Annotated[
    str, typer.Option("--torch", metavar="X.Y", help="PyTorch minor for the host, e.g. 2.14.")
]
OsOption = Annotated[
    str | None,
    typer.Option(
        "--os",
        metavar="ID-VERSION",
        help="Host OS, e.g. ubuntu-26.04 (default: the newest OS with pip wheels).",
    ),
]
Sha256Option = Annotated[
    str | None,
    typer.Option(
        "--neuron-env-sha256",
        metavar="HEX",
        help="sha256 of the --neuron-env-source file; the host refuses anything else.",
    ),
]
SpecOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-env-spec",
        metavar="SPEC",
        help="With --neuron-env-source pypi: what the host pip-installs "
        "(default: this version, neuron-env==VERSION).",
    ),
]

# install, download and image render: mirrors of the indexes (install.py still declares its own
# copy of these three; it should import them from here).
IndexUrlOption = Annotated[
    str | None,
    typer.Option(
        "--index-url",
        help="Default index (mirror) for everything that is not routed "
        "(default: the backend's configuration).",
    ),
]
NeuronIndexOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-index", help="Mirror of the Neuron index (torch-neuronx, neuronx-cc, nki)."
    ),
]
PytorchIndexOption = Annotated[
    str | None, typer.Option("--pytorch-index", help="Mirror of the PyTorch CPU index (torch).")
]
