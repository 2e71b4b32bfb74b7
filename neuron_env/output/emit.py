"""The one output layer: each result type's output contract, and the one :func:`emit`.

A result type's :class:`Output` is registered by its class: the formats enum that ``--format``
takes (:mod:`neuron_env.output.formats`), a :class:`Format` for each member, and its
:class:`Outcome` (status and exit code). A command hands the contract, its result, the chosen
format and its ``--output`` to :func:`emit`, which writes the document and returns the exit code
the command ends with, so no command computes it again.

Every JSON document of neuron-env's own is :func:`document`: the versioned envelope with the
common keys (``schema``, ``command``, ``status``, ``exit_code``, ``errors``) beside its data. A
command that fails after it was asked for JSON still prints one (:func:`write_error_document`,
called where errors become exit codes, in :func:`neuron_env.cli.main`).

Data flow: ``operation(request) -> result -> emit(OUTPUT, result, format, output) -> exit code``.
This module is standard library only: the command line's options use it before any renderer is
loaded.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

from neuron_env import __version__
from neuron_env.errors import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, BadInput
from neuron_env.frozen import frozen
from neuron_env.output.formats import OutputFormat
from neuron_env.signals import raise_lost_interrupt

R = TypeVar("R")
F = TypeVar("F", bound=OutputFormat)

STATUS_OK = "ok"
STATUS_FAIL = "fail"
STATUS_ERROR = "error"
STATUS_INTERRUPTED = "interrupted"


@frozen
class Outcome:
    """What a result means for the run: its one-word ``status`` and the process's exit code."""

    status: str
    exit_code: int


DONE = Outcome(STATUS_OK, EXIT_OK)


def passed(ok: bool) -> Outcome:
    """``ok`` (exit 0) or ``fail`` (exit 1)."""
    return DONE if ok else Outcome(STATUS_FAIL, EXIT_FAILED)


def by_exit_code(exit_code: int) -> Outcome:
    """The status that an exit code alone says: 0 ok, 2 (bad input) error, else fail."""
    if exit_code == EXIT_OK:
        return DONE
    return Outcome(STATUS_ERROR if exit_code == EXIT_BAD_INPUT else STATUS_FAIL, exit_code)


@frozen
class Format(Generic[R]):
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


def _always_done(_: object) -> Outcome:
    return DONE


@frozen
class Output(Generic[R, F]):
    """One result type's output contract, registered by its class in :data:`REGISTRY`."""

    result: type[R]
    formats: type[F]
    table: Mapping[F, Format[R]]
    outcome: Callable[[R], Outcome] = field(default=_always_done)

    def __post_init__(self) -> None:
        missing = [member.value for member in self.formats if member not in self.table]
        if missing:  # a format the command line offers but nothing writes: fail at import
            raise TypeError(f"{self.result.__name__} has no renderer for: {', '.join(missing)}")
        REGISTRY[self.result] = self

    def to_format(self, choice: F) -> Format[R]:
        """The :class:`Format` of ``choice``, a member of this result type's formats enum."""
        return self.table[self.formats(choice)]


REGISTRY: dict[type, Output[Any, Any]] = {}
"""Every output contract loaded so far, by result class (renderer modules load lazily)."""


def emit(
    contract: Output[R, F], result: R, choice: F, output: Path | None = None, **options: Any
) -> int:
    """Write ``result`` in ``choice`` to ``output`` (a file; None: stdout); the exit code.

    An output that cannot be written is bad input (exit 2). ``options`` (``verbose``,
    ``command``, ...) go to the renderer.
    """
    raise_lost_interrupt()  # an interrupt Python swallowed ends the run here, before any report
    chosen = contract.to_format(choice)
    if output is None and contract.formats(choice).value == "json":
        INVOCATION.written = True  # a failure after this point adds no second document
    _write(chosen, result, output, options)
    return contract.outcome(result).exit_code


def _write(chosen: Format[R], result: R, output: Path | None, options: dict[str, Any]) -> None:
    if chosen.terminal is not None and output is None:
        from neuron_env.output.console import new_console, plain_stream

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

    :func:`neuron_env.output.files.write_file` writes it: a regular file is replaced whole (an
    interrupt, a kill or a full disk leaves the old file, or none, never half of the new one), a
    link at the path is replaced, never followed, and a planted one is refused. An output path
    that cannot be written is bad input (exit 2), said before anything else fails.
    """
    if path is None:
        sys.stdout.write(text)
        return
    from neuron_env.output.files import refuse_planted_link, write_file

    try:
        refuse_planted_link(path)  # before a folder is made through a planted link
        _make_parent(path.parent)
        # a file name that is not UTF-8 (a surrogate, PEP 383) is written as its own bytes
        write_file(path, text.encode("utf-8", "surrogateescape"), append=append)
    except OSError as exc:
        raise BadInput(f"Cannot write {path}: {exc.strerror}.") from None


def _make_parent(folder: Path) -> None:
    """Create the output's folder, saying so: a typo in ``-o`` should not make a tree unseen."""
    if folder.is_dir():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # "File exists" would not say which
        from neuron_env.escape import terminal

        raise BadInput(f"Cannot create the folder {terminal(str(folder))}: a part of it is a file.",
                       hint="Choose another -o path.") from None  # fmt: skip
    from neuron_env.escape import terminal

    sys.stderr.write(f"Created the folder {terminal(str(folder))} for the output.\n")


# --- the JSON envelope --------------------------------------------------------------------------


@dataclass
class Invocation:
    """The command that runs in this process, and whether it was asked for JSON (the
    ``--format``/``--json`` options record it as soon as they are parsed)."""

    command: str = ""
    json: bool = False
    written: bool = False


INVOCATION = Invocation()


def record_format(command: str, choice: str | None) -> None:
    """The command line asked ``command`` (e.g. ``"matrix resolve"``) for ``choice``."""
    INVOCATION.command = command
    INVOCATION.json = INVOCATION.json or choice == "json"


Error = tuple[str, str | None]
"""An error's message and hint, as the envelope's ``errors`` list them."""


def document(
    schema: str,
    payload: Mapping[str, Any],
    outcome: Outcome,
    version: int = 1,
    errors: Iterable[Error] = (),
) -> dict[str, Any]:
    """The versioned envelope of ``schema`` (e.g. ``"matrix-resolve"``): the common keys, then
    ``payload`` as plain data."""
    from neuron_env.serialize import to_jsonable

    return {
        "schema": f"neuron-env/{schema}/v{version}",
        "neuron_env_version": __version__,
        "command": INVOCATION.command or schema.replace("-", " "),
        "status": outcome.status,
        "exit_code": outcome.exit_code,
        "errors": [{"message": message, "hint": hint} for message, hint in errors],
        **to_jsonable(dict(payload)),
    }


def dumps(doc: Mapping[str, Any]) -> str:
    """A JSON document as neuron-env prints it."""
    return json.dumps(doc, indent=2) + "\n"


def write_error_document(errors: Iterable[Error], outcome: Outcome) -> None:
    """A failed command's envelope on stdout, when it was asked for JSON and printed none."""
    if not INVOCATION.json or INVOCATION.written:
        return
    INVOCATION.written = True
    schema = INVOCATION.command.replace(" ", "-") or "neuron-env"
    sys.stdout.write(dumps(document(schema, {}, outcome, errors=errors)))
