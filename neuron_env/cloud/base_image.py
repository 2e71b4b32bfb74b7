"""Which image a launch template or an AMI build starts from.

A Neuron DLAMI is referenced through its public SSM parameter (``resolve:ssm:...``), so Auto
Scaling groups pick up a new DLAMI without a new template version. The matrix records each
DLAMI's parameter and whether it is confirmed; an unconfirmed one is carried as a warning, never
treated as a fact.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Literal

from neuron_env.errors import UnsupportedCombination
from neuron_env.frozen import frozen
from neuron_env.matrix import Note, Release
from neuron_env.matrix.model import Pairing
from neuron_env.wording import join_words

ImageSource = Literal["dlami", "ami"]
SSM_PREFIX = "resolve:ssm:"
LIST_DLAMI_PARAMETERS = (
    "aws ssm get-parameters-by-path --path /aws/service/neuron --recursive "
    "--query 'Parameters[].Name'"
)


@frozen
class ImageChoice:
    """The image and what it brings: a Python environment, the Neuron driver and tools."""

    image_id: str
    source: ImageSource
    description: str
    os: str
    ssm_parameter: str | None = None
    ssm_confirmed: bool = True
    venv: str | None = None
    has_neuron: bool = False
    note: str = ""

    @property
    def has_python_env(self) -> bool:
        return self.venv is not None

    def resolved(self, image_id: str) -> ImageChoice:
        """The same image with its SSM parameter resolved to an AMI id."""
        return dataclasses.replace(self, image_id=image_id)


def custom_image(ami: str, os_id: str) -> ImageChoice:
    """A user's own AMI: neuron-env cannot know what is on it, so boot-time setup checks."""
    return ImageChoice(ami, "ami", f"AMI {ami} (given with --ami)", os_id)


def dlami_image(release: Release, pairing: Pairing, os_id: str, kind: str | None) -> ImageChoice:
    """The release's DLAMI for ``os_id``: its single-framework DLAMI for this PyTorch if there
    is one (its venv already holds TorchNeuron), else the base DLAMI; ``kind`` forces one."""
    candidates = [d for d in release.dlamis if d.os == os_id and (kind is None or d.kind == kind)]
    framework = [d for d in candidates if d.kind == "single-framework" and d.torch == pairing.torch]
    base = [d for d in candidates if d.kind == "base"]
    if not (framework or base):
        raise _no_dlami(release, os_id, kind)
    chosen = (framework or base)[0]
    return ImageChoice(
        image_id=SSM_PREFIX + chosen.ssm_parameter,
        source="dlami",
        description=_label(chosen.name, os_id),
        os=os_id,
        ssm_parameter=chosen.ssm_parameter,
        ssm_confirmed=chosen.ssm_confirmed and chosen.confirmed,
        venv=chosen.venv if chosen.kind == "single-framework" else None,
        has_neuron=True,
        note=chosen.note,
    )


def image_notes(image: ImageChoice, release: Release) -> Iterator[Note]:
    """What a person should know about the chosen image."""
    if image.ssm_parameter and not image.ssm_confirmed:
        yield Note(
            "warning",
            "image.ssm-unconfirmed",
            f"The SSM parameter {image.ssm_parameter} is unconfirmed: {image.note} "
            f"Check it before relying on it: {LIST_DLAMI_PARAMETERS}",
        )
    if image.source == "dlami":
        yield Note(
            "info",
            "image.latest",
            f"The DLAMI's 'latest' alias may carry a newer Neuron release than {release.version}; "
            "the boot-time doctor judges the host against the release you asked for.",
        )
    else:
        yield Note(
            "info",
            "image.custom",
            "With --ami, boot-time setup installs what the image lacks (Neuron packages, EFA, "
            "the Python environment) and skips what it finds.",
        )


def _label(name: str, os_id: str) -> str:
    """``<DLAMI name>, latest``, with the OS added when the name does not carry it."""
    version = os_id.rpartition("-")[2]
    return f"{name}, latest" if version in name else f"{name} for {os_id}, latest"


def _no_dlami(release: Release, os_id: str, kind: str | None) -> UnsupportedCombination:
    available = sorted({d.os for d in release.dlamis if kind is None or d.kind == kind})
    what = f"{kind} DLAMI" if kind else "DLAMI"
    return UnsupportedCombination(
        f"Neuron {release.version} has no {what} for {os_id}; "
        f"there are {what}s for {join_words(available) or 'no OS'}.",
        hint="Pick one of those with --os, or give your own image with --ami ami-....",
    )
