"""The ``neuron-env`` group as typer builds it: the commands by name, the global options, and
what click's usage errors say (``error:`` lines, the JSON envelope when JSON was asked for).

:mod:`neuron_env.cli` runs it; a command's own module is imported only when it runs.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from typer._click.exceptions import ClickException, NoArgsIsHelpError, NoSuchOption
from typer.core import TyperGroup
from typer.exceptions import Abort

from neuron_env import __version__
from neuron_env.cli import COMMANDS, GLOBAL_OPTIONS, interrupted, load_command
from neuron_env.cli._common import Settings, print_error
from neuron_env.errors import EXIT_BAD_INPUT, BadInput
from neuron_env.invocation import command


class _LazyCommands(Mapping[str, Any]):
    """The top-level commands by name, each built the first time it is looked up."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}

    def __getitem__(self, name: str) -> Any:
        if name not in COMMANDS:
            raise KeyError(name)
        if name not in self._built:
            self._built[name] = load_command(name)
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class LazyGroup(TyperGroup):
    """The top-level group: knows every command by name, builds only the one that runs."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = _LazyCommands()  # type: ignore[assignment]

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a signal that no step of it reported itself ends it with the one
        ``Interrupted`` line (click would end it silently with exit 130, SIGTERM included)."""
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt:
            raise interrupted() from None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        from typer._click.utils import make_default_short_help

        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [
            (name, make_default_short_help(spec.help, limit)) for name, spec in COMMANDS.items()
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


app = typer.Typer(
    cls=LazyGroup,
    name="neuron-env",
    help="Provision and validate PyTorch environments for AWS Trainium (TorchNeuron).\n\n"
    "Examples:\n\n"
    "  neuron-env doctor\n\n"
    "  neuron-env matrix list\n\n"
    "  neuron-env matrix resolve --torch 2.14 --python-version 3.12\n\n"
    "  neuron-env install --torch 2.14 --venv ./neuron-venv --dry-run\n\n"
    "  neuron-env scan train.py src/",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain click help: no rich/markdown import on --help
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"neuron-env {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    matrix_dir: Annotated[
        list[Path] | None,
        typer.Option(
            "--matrix-dir",
            metavar="DIR",
            help="Extra directory of matrix files (newer releases); may repeat. "
            "Also read from $NEURON_ENV_MATRIX_DIR.",
            file_okay=False,
        ),
    ] = None,
    debug: Annotated[
        bool, typer.Option("--debug", help="Show tracebacks for errors.", envvar="NEURON_ENV_DEBUG")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", callback=_show_version, is_eager=True, help="Print the version."),
    ] = False,
) -> None:
    """Provision and validate PyTorch environments for AWS Trainium (TorchNeuron)."""
    ctx.obj = Settings(debug=debug, matrix_dirs=list(matrix_dir or []))
    from neuron_env.invocation import carry_global_options

    carry_global_options(ctx.obj.matrix_dirs)


def report_click_failure(exc: Exception) -> bool:
    """Say a usage error click found (unknown value, missing option) or its Abort, and exit; False
    for any other exception (the caller raises it again)."""
    from neuron_env.cli import _fail_as_json

    if isinstance(exc, NoArgsIsHelpError):  # 'neuron-env', 'neuron-env fleet': the help, as is
        sys.stderr.write(exc.format_message().rstrip("\n") + "\n")
        sys.exit(EXIT_BAD_INPUT)  # no command: as click ends it, on stderr with exit 2
    if isinstance(exc, ClickException):
        # One style for every error, click's too: an "error:" line and the next step; exit 2,
        # and under --format json the envelope on stdout, even when click stopped before it
        # read --format (an unknown option, an option missing its value).
        hint = _global_option_hint(exc) or _usage_hint(exc)
        print_error(BadInput(exc.format_message(), hint=hint))
        _note_json_asked(sys.argv[1:])
        _fail_as_json([(exc.format_message(), hint)], "error", EXIT_BAD_INPUT)
    if isinstance(exc, Abort):
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    return False


def _global_option_hint(exc: ClickException) -> str | None:
    """``neuron-env doctor --matrix-dir X``: click says only "No such option"; say where the option
    goes, with the command line as it would run."""
    name = getattr(exc, "option_name", None)
    if not isinstance(exc, NoSuchOption) or name not in GLOBAL_OPTIONS:
        return None
    args = sys.argv[1:]
    at = next(i for i, a in enumerate(args) if a == name or a.startswith(f"{name}="))
    width = 2 if GLOBAL_OPTIONS[name] and "=" not in args[at] else 1
    moved = [*args[at : at + width], *args[:at], *args[at + width :]]
    return f"Global options go before the command: {command(*moved)}"


def _usage_hint(exc: ClickException) -> str | None:
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else _command_path(sys.argv[1:])
    return f"Try '{path} --help'." if path else None


def _command_path(args: list[str]) -> str:
    """``neuron-env matrix resolve`` for ``args`` that name that command (what can be found)."""
    found = _command_of(args)
    return found[1].command_path if found else ""


def _command_of(args: list[str]) -> tuple[Any, Any, list[str]] | None:
    """The command ``args`` name, its click context, and the arguments after its name."""
    from typer._click.core import Context
    from typer.main import get_command

    command_ = get_command(app)
    ctx = Context(command_, info_name="neuron-env")
    at = 0
    while hasattr(command_, "get_command") and at < len(args):
        token = args[at]
        if token.startswith("-"):  # a global option, with its value when it takes one
            at += 2 if GLOBAL_OPTIONS.get(token) else 1
            continue
        found = command_.get_command(ctx, token)
        if found is None:
            return None
        command_, ctx, at = found, Context(found, info_name=token, parent=ctx), at + 1
    return command_, ctx, args[at:]


def _note_json_asked(args: list[str]) -> None:
    """Record ``--json``/``--format json`` that click never read (it stopped at a usage error
    first), as their own callbacks would: the error then goes out as the JSON envelope."""
    try:
        found = _command_of(args)
        if found is None:
            return
        command_, ctx, rest = found
        for param in command_.params:
            value = _option_value(rest, param.opts)
            if value is not None and ("--json" in param.opts or "--format" in param.opts):
                param.process_value(ctx, value)
    except Exception:  # noqa: S110 - best effort: the error itself is already said
        pass


def _option_value(args: list[str], names: list[str]) -> Any:
    """The value ``args`` give the option ``names`` (True for a flag), or None."""
    for at, token in enumerate(args):
        name, equals, value = token.partition("=")
        if name not in names:
            continue
        if name == "--json":
            return True
        if equals:
            return value
        return args[at + 1] if at + 1 < len(args) else None
    return None
