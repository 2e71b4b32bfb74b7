"""What every command shares: global settings, consoles, JSON output, error printing."""

from __future__ import annotations

import functools
import inspect
import math
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from neuron_env.errors import check_format as check_format  # the one unknown --format error
from neuron_env.output.formats import OutputFormat

F = TypeVar("F", bound=OutputFormat)
Command = TypeVar("Command", bound=Callable[..., None])

if TYPE_CHECKING:
    from rich.console import Console

    from neuron_env.errors import NeuronEnvError
    from neuron_env.project_config import ProjectDefaults


@dataclass
class Settings:
    """Global options, stored on the click context by the root callback."""

    debug: bool = False
    matrix_dirs: list[Path] = field(default_factory=list)


def settings(ctx: typer.Context) -> Settings:
    root = ctx.find_root()
    if not isinstance(root.obj, Settings):
        root.obj = Settings()
    return root.obj


def console(stderr: bool = False) -> Console:
    """A rich console that degrades to plain text without a terminal or with NO_COLOR."""
    from neuron_env.output.console import new_console

    return new_console(stderr=stderr)


def format_choice(formats: type[OutputFormat]) -> Callable[[typer.Context, str | None], str | None]:
    """A ``--format`` option's callback for a formats enum (:mod:`neuron_env.output.formats`).

    Eager, so it runs before the other options are checked: it records whether JSON was asked
    for (a usage error found later still prints the envelope), and an unknown format is
    :func:`check_format`'s one ``error:`` line, not click's usage error.
    """

    def convert(ctx: typer.Context, value: str | None) -> str | None:
        from neuron_env.output.emit import record_format

        record_format(command_name(ctx), value if formats.json_is_envelope() else None)
        check_format(value, [member.value for member in formats])
        return value

    return convert


def json_flag(ctx: typer.Context, value: bool) -> bool:
    """``--json``'s callback: the alias of ``--format json``, recorded as soon as it is parsed."""
    from neuron_env.output.emit import record_format

    record_format(command_name(ctx), "json" if value else None)
    return value


def chosen_format(formats: type[F], output_format: str, as_json: bool = False) -> F:
    """The member of ``formats`` that ``--format`` names, or json for ``--json``."""
    return formats("json" if as_json else output_format)


def command_name(ctx: typer.Context) -> str:
    """The command as typed after ``neuron-env``, e.g. ``"matrix resolve"``."""
    names: list[str] = []
    current: Any = ctx  # click's Context: typer's parents are plain click contexts
    while current is not None and current.parent is not None:
        names.append(current.info_name or "")
        current = current.parent
    return " ".join(reversed(names))


def write_output(path: Path | None, text: str, *, append: bool = False) -> None:
    """``text`` to ``path`` (its folder created), or to stdout when ``path`` is None (exit 2 when
    it cannot be written): :func:`neuron_env.output.emit.write_text`."""
    from neuron_env.output.emit import write_text

    write_text(path, text, append=append)


def project_defaults(no_config: bool, *, say_ignored: bool = False) -> ProjectDefaults:
    """The project file's defaults (none with ``--no-config``); ``say_ignored``: each file not
    trusted is named on stderr with the reason (commands whose report does not say it)."""
    from neuron_env.escape import terminal
    from neuron_env.project_config import load_project_defaults

    defaults = load_project_defaults(enabled=not no_config)
    for path, why in defaults.ignored_reasons if say_ignored else ():
        sys.stderr.write(f"note: ignored the project file {terminal(path)}: {terminal(why)}.\n")
    return defaults


def print_error(exc: NeuronEnvError) -> None:
    """One paragraph saying what went wrong, then the next step, on stderr.

    Messages quote paths and file contents: their control characters are shown, not acted on.
    """
    from neuron_env.escape import terminal
    from neuron_env.wording import wrap_words

    width = max(min(_terminal_width(), 100), 20)  # COLUMNS=1 still leaves words a line
    lines = wrap_words(terminal(exc.message), width - 7) or [""]
    body = "\n       ".join(lines)
    out = f"error: {body}\n"
    if exc.hint:  # the next step, often a command to paste: one line, never wrapped
        out += terminal(exc.hint) + "\n"
    sys.stderr.write(out)


def _terminal_width() -> int:
    from neuron_env.output.console import columns

    try:
        return columns() or os.get_terminal_size(2).columns or 100  # a pty may say 0 columns
    except (ValueError, OSError):
        return 100


def seconds_at_least(minimum: float) -> Callable[[typer.CallbackParam, float], float]:
    """An option callback: a number of seconds, finite and at least ``minimum`` (nan, inf, 0 and
    negative numbers are bad input, said as one ``error:`` line)."""

    def check(param: typer.CallbackParam, value: float) -> float:
        if value is not None and not (math.isfinite(value) and value >= minimum):
            from neuron_env.errors import BadInput

            name = param.opts[0] if param.opts else "the timeout"
            raise BadInput(
                f"{name} {value:g} is not a number of seconds neuron-env can wait: "
                f"give a finite number of at least {minimum:g}."
            )
        return value

    return check


def option_group(
    group: Callable[..., object], *, into: str, after: str | None
) -> Callable[[Command], Command]:
    """Give a command the options declared as ``group``'s parameters, listed (in ``--help`` too)
    right after the command's own parameter ``after`` (None: first); the command receives what
    ``group`` builds from them (a request) as its parameter ``into``.

    Commands that take the same block of options declare it, and turn it into a request, once:
    click's shared option decorators, for typer (which reads a command's signature).
    """
    shared = _evaluated_parameters(group)

    def decorate(command: Command) -> Command:
        own = _evaluated_parameters(command, leaving_out=into)
        names = [p.name for p in own]
        cut = 0 if after is None else names.index(after) + 1
        parameters = [*own[:cut], *shared, *own[cut:]]

        @functools.wraps(command)
        def run(**options: Any) -> None:
            grouped = {p.name: options.pop(p.name) for p in shared}
            command(**options, **{into: group(**grouped)})

        del run.__wrapped__  # typer reads the signature below, not the command's own
        run.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
        run.__annotations__ = {p.name: p.annotation for p in parameters}
        return run  # type: ignore[return-value]

    return decorate


def _evaluated_parameters(
    function: Callable[..., object], leaving_out: str = ""
) -> list[inspect.Parameter]:
    """``function``'s parameters but ``leaving_out``, their annotations evaluated in its module (a
    command module writes them as strings, ``from __future__ import annotations``). The return
    type and ``leaving_out`` are not evaluated: they may name types imported for the type checker
    only."""
    namespace = function.__globals__
    return [
        p.replace(annotation=eval(p.annotation, namespace))  # noqa: S307  # the module's own text
        if isinstance(p.annotation, str)
        else p
        for p in inspect.signature(function).parameters.values()
        if p.name != leaving_out
    ]
