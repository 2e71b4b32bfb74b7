"""The work behind ``neuron-env image render``: build the spec, render it, print it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import typer

from neuron_env.aws.container import (
    ImageRequest,
    build_image_spec,
    pins_document,
    read_requirements,
    render_dockerfile,
)
from neuron_env.cli._common import load_matrix, print_notes, write_output
from neuron_env.serialize import envelope

FORMATS = ("text", "json")


def image_request(
    *,
    torch: str,
    release: str | None,
    os: str | None,
    base: str | None,
    packages: Iterable[str],
    requirements: Iterable[Path],
    neuron_env_source: str | None,
    neuron_env_sha256: str | None,
    neuron_env_spec: str | None,
    mirrors: dict[str, str | None],
) -> ImageRequest:
    """The command line as an :class:`ImageRequest`, the ``-r`` files read."""
    listed = [*packages]
    for path in requirements:
        listed.extend(read_requirements(path))
    return ImageRequest(
        torch=torch,
        release=release,
        os=os,
        base=base,
        packages=tuple(listed),
        neuron_env_source=neuron_env_source,
        neuron_env_sha256=neuron_env_sha256,
        neuron_env_spec=neuron_env_spec,
        **mirrors,
    )


def render(
    ctx: typer.Context, request: ImageRequest, output_format: str, output: Path | None
) -> None:
    spec = build_image_spec(load_matrix(ctx), request)
    text = render_dockerfile(spec)
    if output_format == "json":
        payload = {"text": text, "pins": pins_document(spec), "notes": spec.notes}
        text = json.dumps(envelope("image-render", payload), indent=2) + "\n"
    else:
        print_notes(spec.notes)
    write_output(output, text)
