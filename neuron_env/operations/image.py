"""``image render``: a Dockerfile for TorchNeuron, rendered from the support matrix."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from neuron_env.aws.container import ImageRequest
from neuron_env.errors import check_format
from neuron_env.matrix import Note

FORMATS = ("text", "json")


@dataclass(frozen=True, kw_only=True)
class ImageRenderRequest:
    """The image (``requirements``: files of requirement lines, read here) and the format."""

    image: ImageRequest
    requirements: Sequence[Path] = ()
    output_format: str = "text"
    matrix_dirs: Sequence[Path] = ()


@dataclass(frozen=True)
class RenderedImage:
    text: str  # the Dockerfile, or the image-render JSON envelope
    notes: Sequence[Note]  # for stderr; the JSON holds them too


def render_image(request: ImageRenderRequest) -> RenderedImage:
    """The Dockerfile (or, as JSON, it and its pins); an unknown format is said first."""
    import dataclasses

    from neuron_env.aws.container import (
        build_image_spec,
        pins_document,
        read_requirements,
        render_dockerfile,
    )
    from neuron_env.matrix import load_matrix
    from neuron_env.serialize import envelope

    check_format(request.output_format, FORMATS)
    listed = [*request.image.packages]
    for path in request.requirements:
        listed.extend(read_requirements(path))
    image = dataclasses.replace(request.image, packages=tuple(listed))
    spec = build_image_spec(load_matrix(list(request.matrix_dirs)), image)
    text = render_dockerfile(spec)
    if request.output_format == "json":
        payload = {"text": text, "pins": pins_document(spec), "notes": spec.notes}
        text = json.dumps(envelope("image-render", payload), indent=2) + "\n"
    return RenderedImage(text, spec.notes)
