"""``image render``: a Dockerfile for TorchNeuron, rendered from the support matrix."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from neuron_env.frozen import frozen
from neuron_env.image.dockerfile import ImageRequest
from neuron_env.matrix import Note


@frozen(kw_only=True)
class ImageRenderRequest:
    """The image (``requirements``: files of requirement lines, read here)."""

    image: ImageRequest
    requirements: Sequence[Path] = ()
    matrix_dirs: Sequence[Path] = ()


@frozen
class RenderedImage:
    """The Dockerfile and the pins it is built from; written by :func:`neuron_env.output.emit.emit`
    as text (the Dockerfile) or json (the image-render envelope)."""

    dockerfile: str
    pins: dict[str, Any]
    notes: Sequence[Note]  # for stderr with the Dockerfile; the JSON holds them


def render_image(request: ImageRenderRequest) -> RenderedImage:
    """The Dockerfile and its pins."""
    import dataclasses

    from neuron_env.image.dockerfile import build_image_spec, pins_document, render_dockerfile
    from neuron_env.image.inputs import read_requirements
    from neuron_env.matrix import load_matrix

    listed = [*request.image.packages]
    for path in request.requirements:
        listed.extend(read_requirements(path))
    image = dataclasses.replace(request.image, packages=tuple(listed))
    spec = build_image_spec(load_matrix(list(request.matrix_dirs)), image)
    return RenderedImage(render_dockerfile(spec), pins_document(spec), spec.notes)
