"""The one output layer: each result type's formats, and the one :func:`emit`.

A command hands its result, the ``--format`` it was given and its ``--output`` to :func:`emit`;
what a format means for that result lives in one table per result type (a ``FORMATS`` mapping in
the result's renderer module, named in :data:`REGISTRY`). The tables load lazily, so a command
pays only for its own renderers. :func:`format_names` says which formats a result type has, so a
command can refuse an unknown ``--format`` (through :func:`neuron_env.errors.check_format`, the one
``error:`` line) before it does any work.

Data flow: ``operation(request) -> result -> emit(result, format, output)``; a :class:`Format`
either prints in colour straight to the terminal (text on stdout), or renders one string that goes
to ``--output`` or stdout, or (``deliver``) sends it where that format belongs (GitHub's step
summary).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from neuron_env.errors import BadInput, check_format

# Result type (class name) -> "module:ATTRIBUTE" of its format table.
REGISTRY: dict[str, str] = {
    "CaseListing": "neuron_env.report.device:LIST_FORMATS",
    "DoctorReport": "neuron_env.report:DOCTOR_FORMATS",
    "Evaluation": "neuron_env.report.evaluate:FORMATS",
    "FleetReport": "neuron_env.report.fleet:FORMATS",
    "ScanResult": "neuron_env.report.scan:FORMATS",
    "RuleListing": "neuron_env.report.scan:RULES_FORMATS",
    "LaunchTemplate": "neuron_env.report.cloud:LAUNCH_TEMPLATE_FORMATS",
    "LaunchTemplateCreated": "neuron_env.report.cloud:CREATED_FORMATS",
    "RenderedRecipe": "neuron_env.report.cloud:RECIPE_FORMATS",
    "IamPolicy": "neuron_env.report.cloud:POLICY_FORMATS",
    "RenderedImage": "neuron_env.report.cloud:IMAGE_FORMATS",
    "ReleaseList": "neuron_env.report.matrix:LIST_FORMATS",
    "ReleaseShown": "neuron_env.report.matrix:SHOW_FORMATS",
    "ResolvedTarget": "neuron_env.report.matrix:RESOLVE_FORMATS",
    "ReleaseDiff": "neuron_env.report.matrix:DIFF_FORMATS",
    "Validation": "neuron_env.report.matrix:VALIDATE_FORMATS",
    "VerifyResult": "neuron_env.report.matrix_verify:FORMATS",
    "SuiteResult": "neuron_env.report.device:FORMATS",
    "InstallOutcome": "neuron_env.report.install:FORMATS",
}


@dataclass(frozen=True)
class Format:
    """How one result type is written in one format.

    ``render(result, **options)`` is the document as one string. ``terminal(console, result,
    **options)``, when given, prints it in colour instead when it goes to stdout. ``deliver(
    result, text, output)``, when given, writes the rendered text itself (instead of to ``output``
    or stdout).
    """

    render: Callable[..., str]
    terminal: Callable[..., None] | None = None
    deliver: Callable[[Any, str, Path | None], None] | None = None
    styled_only: bool = False
    """``terminal`` is only the styled twin of ``render``: stdout gets it where rich would style
    or size the output (a terminal, ``FORCE_COLOR``, ``COLUMNS``), else ``render``'s text, the
    same characters, written without building a console."""


Formats = Mapping[str, Format]


def formats_of(kind: str | type) -> Formats:
    """The format table of a result type (or its class name)."""
    name = kind if isinstance(kind, str) else _registered_name(kind)
    module, _, attribute = REGISTRY[name].partition(":")
    table: Formats = getattr(importlib.import_module(module), attribute)
    return table


def format_names(kind: str | type) -> tuple[str, ...]:
    """The formats a result type has, in the order its help lists them."""
    return tuple(formats_of(kind))


def emit(result: Any, output_format: str, output: Path | None = None, **options: Any) -> None:
    """Write ``result`` in ``output_format`` to ``output`` (a file; None: stdout).

    An unknown format is bad input (exit 2) naming the formats this result has; an output that
    cannot be written is bad input too. ``options`` (``verbose``, ``command``) go to the renderer.
    """
    table = formats_of(type(result))
    check_format(output_format, table)
    chosen = table[output_format]
    if chosen.terminal is not None and output is None:
        from neuron_env.report.console import new_console, plain_stream

        if not (chosen.styled_only and plain_stream(sys.stdout)):
            chosen.terminal(new_console(), result, **options)
            return
    text = chosen.render(result, **options)
    if chosen.deliver is not None:
        chosen.deliver(result, text, output)
    else:
        write_text(output, text)


def write_text(path: Path | None, text: str, *, append: bool = False) -> None:
    """``text`` to ``path`` (its folder created), or to stdout when ``path`` is None.

    An output path that cannot be written is bad input (exit 2), said before anything else fails.
    """
    if path is None:
        sys.stdout.write(text)
        return
    from neuron_env.signals import deferred_interrupts

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with deferred_interrupts(), path.open("a" if append else "w", encoding="utf-8") as handle:
            handle.write(text)  # a signal waits for the whole text: never half a file
    except OSError as exc:
        raise BadInput(f"Cannot write {path}: {exc.strerror}.") from None


def _registered_name(kind: type) -> str:
    for cls in kind.__mro__:
        if cls.__name__ in REGISTRY:
            return cls.__name__
    raise KeyError(f"no output formats are registered for {kind.__name__}")
