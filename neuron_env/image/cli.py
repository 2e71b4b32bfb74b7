"""``neuron-env image render``: a Dockerfile for TorchNeuron, rendered from the support matrix.

Option parsing only; the image is decided in :mod:`neuron_env.image.workflow` and
:mod:`neuron_env.image.dockerfile` and written by :mod:`neuron_env.image.output`,
imported inside the command so that ``neuron-env --help`` never loads jinja2.
"""

from __future__ import annotations

from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format, settings
from neuron_env.cli.options import (
    DocumentOutputOption,
    ImageBaseOption,
    ImageSourceOption,
    IndexUrlOption,
    NeuronIndexOption,
    OsOption,
    PytorchIndexOption,
    ReleaseOption,
    RequirementOption,
    Sha256Option,
    SpecOption,
    TorchOption,
    format_option,
)
from neuron_env.output.formats import DocumentFormat

image_app = typer.Typer(
    help="Container images for Trainium: a Dockerfile with the release's Neuron user space, EFA "
    "and the Python environment built by neuron-env install, rendered from the support matrix.",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@image_app.command("render")
def render(
    ctx: typer.Context,
    torch: TorchOption,
    packages: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[PACKAGE]...",
            help="Your packages, each pinned (NAME==VERSION), installed after the environment.",
        ),
    ] = None,
    release: ReleaseOption = None,  # no -r: image render's -r is --requirement
    os: OsOption = None,
    base: ImageBaseOption = None,
    requirements: RequirementOption = None,
    neuron_env_source: ImageSourceOption = None,
    neuron_env_sha256: Sha256Option = None,
    neuron_env_spec: SpecOption = None,
    index_url: IndexUrlOption = None,
    neuron_index: NeuronIndexOption = None,
    pytorch_index: PytorchIndexOption = None,
    output_format: Annotated[
        str,
        format_option(
            DocumentFormat,
            "text (the Dockerfile) or json (neuron-env/image-render/v1: text and pins).",
        ),
    ] = "text",
    output: DocumentOutputOption = None,
) -> None:
    """Print a Dockerfile for TorchNeuron on Trainium, from the support matrix.

    The base for an OS with pip wheels, the Neuron apt repository with the release's runtime,
    collectives and tools (never the driver: it is the host's), EFA user space (--skip-kmod),
    neuron-env from a source checked against its sha256, the Python environment via
    'neuron-env install', OCI labels with the pins, and a HEALTHCHECK running
    'neuron-env preflight --level 0'. Notes go to stderr.

    Examples:

    \b
      neuron-env image render --torch 2.14 \\
          --neuron-env-source https://artifacts.example.com/neuron_env-0.1.0-py3-none-any.whl \\
          --neuron-env-sha256 HEX -o Dockerfile
      neuron-env image render --torch 2.14 --neuron-env-source pypi \\
          transformers==4.57.1 -r requirements.txt -o Dockerfile
      docker build -t trainium-torch . && docker run --device=/dev/neuron0 trainium-torch
    """
    from neuron_env.image.dockerfile import ImageRequest
    from neuron_env.image.output import IMAGE
    from neuron_env.image.workflow import ImageRenderRequest, render_image
    from neuron_env.install.plan import Mirrors
    from neuron_env.output.emit import emit

    choice = chosen_format(DocumentFormat, output_format)  # checked before any file is read
    image = ImageRequest(
        torch=torch, release=release, os=os, base=base, packages=tuple(packages or ()),
        neuron_env_source=neuron_env_source, neuron_env_sha256=neuron_env_sha256,
        neuron_env_spec=neuron_env_spec,
        mirrors=Mirrors(
            index_url=index_url, neuron_index=neuron_index, pytorch_index=pytorch_index
        ),
    )  # fmt: skip
    request = ImageRenderRequest(
        image=image, requirements=tuple(requirements or ()), matrix_dirs=settings(ctx).matrix_dirs
    )
    raise typer.Exit(emit(IMAGE, render_image(request), choice, output))
