"""What ``image render`` writes: the Dockerfile (its notes on stderr), or the image-render
envelope."""

from __future__ import annotations

from neuron_env.image.workflow import RenderedImage
from neuron_env.output.console import notes_then_document
from neuron_env.output.emit import DONE, Format, Output, document, dumps
from neuron_env.output.formats import DocumentFormat


def _image_json(image: RenderedImage) -> str:
    payload = {"text": image.dockerfile, "pins": image.pins, "notes": image.notes}
    return dumps(document("image-render", payload, DONE))


# ``image render``: the Dockerfile (its notes on stderr), or the image-render envelope.
IMAGE: Output[RenderedImage, DocumentFormat] = Output(
    RenderedImage,
    DocumentFormat,
    {
        DocumentFormat.text: Format(lambda image: image.dockerfile, deliver=notes_then_document),
        DocumentFormat.json: Format(_image_json),
    },
)
