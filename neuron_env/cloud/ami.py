"""A Packer recipe (HCL2, amazon-ebs) for a Neuron-ready AMI, rendered from the matrix.

The recipe uploads the shared ``scripts/bootstrap.sh`` and runs it in image-build mode: the Neuron
apt packages pinned to the release, kernel headers, EFA, the Python environment through
``neuron-env install``, and a final ``neuron-env doctor`` whose failure fails the build. The
builder must therefore be a Trainium instance (default ``trn2.3xlarge``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from neuron_env import __version__
from neuron_env.cloud import values
from neuron_env.cloud.base_image import dlami_image
from neuron_env.cloud.bootstrap import DEFAULT_VENV, INSTALLED_PATH, BootstrapArgs, bootstrap_script
from neuron_env.cloud.spec import (
    MIN_ROOT_GIB,
    instance_facts,
    require_wheels,
    resolve_host,
    root_device,
)
from neuron_env.cloud.tool_source import tool_source
from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, MiB, read_text
from neuron_env.matrix import Matrix, Note, Release
from neuron_env.matrix.model import Pairing
from neuron_env.templating import render

Base = Literal["dlami", "ubuntu"]
BASES: tuple[Base, ...] = ("dlami", "ubuntu")
DEFAULT_BUILDER = "trn2.3xlarge"
UPLOAD_PATH = "/tmp/neuron-env-bootstrap"  # noqa: S108 - Packer's file provisioner, then moved
# Canonical publishes Ubuntu AMI ids as public SSM parameters; this path is not in our references.
CANONICAL_PARAMETER = (
    "/aws/service/canonical/ubuntu/server/{version}/stable/current/amd64/hvm/ebs-gp3/ami-id"
)


@frozen
class AmiRequest:
    """The options of ``neuron-env ami render``."""

    torch: str
    release: str | None = None
    os: str | None = None
    base: str = "dlami"
    builder: str = DEFAULT_BUILDER
    level: int = 1
    volume_size: int = MIN_ROOT_GIB
    neuron_env_source: str | None = None
    neuron_env_sha256: str | None = None
    neuron_env_spec: str | None = None


@frozen
class AmiRecipe:
    """The rendered recipe: file name → text, and what to tell the user."""

    files: dict[str, str]
    notes: tuple[Note, ...]


def build_ami_recipe(matrix: Matrix, request: AmiRequest) -> AmiRecipe:
    """Render the Packer template, its provisioning script and the bootstrap script."""
    release, os_id, target, pairing = resolve_host(
        matrix, request.torch, request.release, request.os, request.builder
    )
    instance_facts(release, request.builder)
    source = _source_image(release, pairing, request.base, os_id)
    if source.venv is None:
        require_wheels(release, pairing, os_id)  # the recipe builds the venv from pip wheels
    tool = tool_source(
        request.neuron_env_source,
        request.neuron_env_sha256,
        request.neuron_env_spec,
        allow_ami=False,
    )
    bootstrap = BootstrapArgs(
        release=str(release.version),
        torch=pairing.torch_minor,
        tool=tool,
        system="always",
        venv=source.venv or DEFAULT_VENV,
        python_env="auto" if source.venv else "always",
        level=request.level,
        tag=False,
        image_build=True,
    )
    notes = (*_notes(target.notes, source), *tool.notes())
    context = {
        "version": __version__,
        "description": f"Neuron {release.version}, PyTorch {pairing.torch}, {os_id}",
        "release": str(release.version),
        "torch": str(pairing.torch),
        "os": os_id,
        "source_description": source.description,
        "source_parameter": source.parameter,
        "python_env": f"the DLAMI's Python environment {source.venv}"
        if source.venv
        else "the Python environment via 'neuron-env install'",
        "builder": request.builder,
        "volume_size": values.volume_size(request.volume_size, MIN_ROOT_GIB),
        "root_device": root_device(os_id),
        "ssh_username": "ubuntu" if os_id.startswith("ubuntu") else "ec2-user",
        "ami_name_prefix": f"neuron-env-{release.version}-torch{pairing.torch}-{os_id}",
        "warnings": [n.message for n in notes if n.level == "warning"],
        "upload_path": UPLOAD_PATH,
        "installed_path": INSTALLED_PATH,
        "arguments": bootstrap.argv(),
    }
    files = {
        "neuron.pkr.hcl": render("ami/neuron.pkr.hcl.j2", context),
        "provision.sh": render("ami/provision.sh.j2", context),
        "bootstrap.sh": bootstrap_script(),
    }
    return AmiRecipe(files, notes)


def _existing(path: Path) -> str | None:
    """An output file already there (None when it is no text file of a recipe's size)."""
    try:
        return read_text(path, 1 * MiB)
    except InputRejected:
        return None


def write_recipe(recipe: AmiRecipe, directory: Path, *, force: bool = False) -> list[Path]:
    """Write the recipe's files into ``directory``; never overwrite a different file unless
    ``force``."""
    if directory.exists() and not directory.is_dir():
        raise BadInput(f"--output {directory} exists and is not a directory.")
    clashes = [
        name
        for name, text in recipe.files.items()
        if (directory / name).exists() and _existing(directory / name) != text
    ]
    if clashes and not force:
        raise BadInput(
            f"{directory} already holds different {', '.join(clashes)}; nothing was written.",
            hint="Choose another --output directory, or pass --force to overwrite them.",
        )
    from neuron_env.output.files import refuse_planted_link, write_file

    refuse_planted_link(directory)  # never a folder made through a planted link
    directory.mkdir(parents=True, exist_ok=True)

    written = []
    for name, text in recipe.files.items():
        path = directory / name  # a link there is replaced, never followed; an old file's mode kept
        write_file(path, text.encode("utf-8"), mode=0o755 if name.endswith(".sh") else None)
        written.append(path)
    return written


@frozen
class SourceImage:
    """The AMI the build starts from, as a public SSM parameter."""

    parameter: str
    description: str
    confirmed: bool
    note: str
    venv: str | None = None  # the Python environment the image already holds


def _source_image(release: Release, pairing: Pairing, base: str, os_id: str) -> SourceImage:
    if base not in BASES:
        raise BadInput(f"--base '{base}' is not one of: {', '.join(BASES)}.")
    if base == "ubuntu":
        if not os_id.startswith("ubuntu-"):
            raise UnsupportedCombination(f"--base ubuntu needs an Ubuntu --os, not {os_id}.")
        return SourceImage(
            CANONICAL_PARAMETER.format(version=os_id.removeprefix("ubuntu-")),
            f"Canonical's Ubuntu {os_id.removeprefix('ubuntu-')} AMI (latest)",
            confirmed=False,
            note="Canonical's public parameter path is not in neuron-env's references.",
        )
    # Where pip wheels exist the recipe builds a pinned environment on the base DLAMI; elsewhere
    # only the single-framework DLAMI's own environment can carry TorchNeuron.
    kind = "base" if release.os[os_id].wheels else None
    image = dlami_image(release, pairing, os_id, kind=kind)
    parameter = image.ssm_parameter or ""
    return SourceImage(parameter, image.description, image.ssm_confirmed, image.note, image.venv)


def _notes(target_notes: tuple[Note, ...], source: SourceImage) -> Iterator[Note]:
    yield from (n for n in target_notes if n.code != "python.unspecified")
    if not source.confirmed:
        yield Note(
            "warning",
            "image.ssm-unconfirmed",
            f"The source AMI's SSM parameter {source.parameter} is unconfirmed: {source.note} "
            f"Check it with 'aws ssm get-parameter --name {source.parameter}' before building.",
        )
    yield Note(
        "info",
        "ami.builder",
        "The build ends with 'neuron-env doctor' on the builder, so the builder must be a "
        "Trainium instance (Packer variable instance_type).",
    )
