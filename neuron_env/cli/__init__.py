"""The ``neuron-env`` command line: thin adapters from options to the library.

The top-level group knows each command by name and one line of help (:data:`COMMANDS`) and imports
a command's module only when that command runs or shows its own help, so ``neuron-env --help``,
``neuron-env --version`` and ``neuron-env doctor --help`` do not build the options of every other
command. Heavy imports (torch, boto3, jinja2, the matrix itself) happen inside the commands.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Iterator, Mapping
from importlib import import_module
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from typer._click.exceptions import ClickException, NoSuchOption
from typer.core import TyperGroup
from typer.exceptions import Abort

from neuron_env import __version__
from neuron_env.cli._common import Settings, print_error
from neuron_env.errors import EXIT_BAD_INPUT, BadInput, Interrupted, NeuronEnvError
from neuron_env.frozen import frozen
from neuron_env.invocation import command
from neuron_env.signals import interrupts_unwind


@frozen
class LazyCommand:
    """Where a top-level command lives, and the help line ``neuron-env --help`` shows for it.

    ``attribute`` is a command function (registered with ``app.command``) or, when ``group`` is set,
    a :class:`typer.Typer` of subcommands (registered with ``app.add_typer``). ``help`` is the first
    paragraph of the command's own help (a test keeps the two equal).
    """

    module: str
    attribute: str
    help: str
    group: bool = False


COMMANDS: dict[str, LazyCommand] = {
    "doctor": LazyCommand(
        "neuron_env.doctor.cli",
        "doctor",
        "Validate this host and a Python environment for TorchNeuron; say what to fix.",
    ),
    "facts": LazyCommand(
        "neuron_env.doctor.cli",
        "facts",
        "Collect a JSON snapshot of this host and a Python environment (facts only, no verdicts).",
    ),
    "preflight": LazyCommand(
        "neuron_env.preflight.cli",
        "preflight",
        "Gate a CI job or a node on a healthy Trainium environment (doctor + device levels).",
    ),
    "install": LazyCommand(
        "neuron_env.install.cli",
        "install",
        "Install TorchNeuron into a virtual environment: exact pins, each from its own index.",
    ),
    "download": LazyCommand(
        "neuron_env.install.cli",
        "download",
        "Fill a wheelhouse for an air-gapped machine, routed like 'install'.",
    ),
    "smoke": LazyCommand(
        "neuron_env.selftest.cli",
        "smoke",
        "Quick device check: availability and count, then a matmul vs CPU in fp32 and bf16.",
    ),
    "selftest": LazyCommand(
        "neuron_env.selftest.cli",
        "selftest",
        "Kernel self-test: each case on the device vs CPU, eager and torch.compile, fwd and bwd.",
    ),
    "collectives": LazyCommand(
        "neuron_env.collectives.cli",
        "collectives",
        "All-reduce, all-gather, reduce-scatter, all-to-all and broadcast over a size sweep.",
    ),
    "scan": LazyCommand(
        "neuron_env.scan.cli",
        "scan",
        "Find code that needs changes for TorchNeuron: PyTorch/XLA idioms, APIs the release does\n"
        "not support, float64, torch.compile options, hard-coded CUDA devices.",
    ),
    "evaluate": LazyCommand(
        "neuron_env.evaluate.cli",
        "evaluate",
        "Run your model on the device and compare it with the CPU: numerics, CPU fallback, "
        "timings.",
    ),
    "fleet": LazyCommand(
        "neuron_env.fleet.cli",
        "app",
        "Validate many Trainium hosts: collect their facts (AWS Systems Manager or any other way) "
        "and judge them together.",
        group=True,
    ),
    "matrix": LazyCommand(
        "neuron_env.matrix.cli",
        "app",
        "The versioned support matrix: which torch, torch-neuronx, Python, OS and instance go "
        "together, per Neuron release.",
        group=True,
    ),
    "launch-template": LazyCommand(
        "neuron_env.cloud.cli",
        "launch_template_app",
        "EC2 launch templates for Trainium hosts: DLAMI, EFA layout, IMDSv2, storage, capacity and "
        "boot-time validation, rendered from the support matrix.",
        group=True,
    ),
    "ami": LazyCommand(
        "neuron_env.cloud.cli",
        "ami_app",
        "Packer recipes for Neuron-ready AMIs, rendered from the support matrix.",
        group=True,
    ),
    "image": LazyCommand(
        "neuron_env.image.cli",
        "image_app",
        "Container images for Trainium: a Dockerfile with the release's Neuron user space, EFA "
        "and the Python environment built by neuron-env install, rendered from the support matrix.",
        group=True,
    ),
}


def load_command(name: str) -> Any:
    """Import the module of top-level command ``name`` and build its click command."""
    spec = COMMANDS[name]
    target = getattr(import_module(spec.module), spec.attribute)
    holder = typer.Typer(add_completion=False, rich_markup_mode=None)
    if spec.group:
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    from neuron_env.cli.help_text import protect_examples

    return protect_examples(typer.main.get_group(holder).commands[name])


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
            raise Interrupted(
                "Interrupted. What the command had started was stopped and its temporary files "
                "removed."
            ) from None

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


def main() -> None:
    """Console-script entry point: run the app, turn expected errors into exit codes.

    This is the one place where a failure becomes an exit code: on stderr as one ``error:``
    paragraph (or click's usage message), and, for a command asked for JSON, as the envelope's
    ``errors`` on stdout. SIGINT and SIGTERM unwind every command alike
    (:func:`interrupts_unwind`): its children are killed with their process groups, its temporary
    files removed, then exit 130 or 143.
    """
    try:
        with interrupts_unwind():
            code = app(standalone_mode=False)
    except NeuronEnvError as exc:
        if _debug_requested():
            import traceback  # --debug only: it imports linecache, tokenize and more

            traceback.print_exc()
        print_error(exc)
        _fail_as_json([(exc.message, exc.hint)], exc.status, exc.exit_code)
    except ClickException as exc:  # a usage error click found: unknown value, missing option
        # One style for every error, click's too: an "error:" line and the next step; exit 2,
        # and under --format json the envelope on stdout, even when click stopped before it
        # read --format (an unknown option, an option missing its value).
        hint = _global_option_hint(exc) or _usage_hint(exc)
        print_error(BadInput(exc.format_message(), hint=hint))
        _note_json_asked(sys.argv[1:])
        _fail_as_json([(exc.format_message(), hint)], "error", EXIT_BAD_INPUT)
    except Abort:
        sys.stderr.write("Aborted!\n")
        sys.exit(1)
    finally:
        # The interpreter's shutdown runs full garbage collections over every object the run
        # made (~12 ms of a 0.15 s doctor run); the process is ending, so exempt them. Files and
        # streams are closed as before: by their owners, then by the shutdown itself.
        gc.freeze()
    sys.exit(code if isinstance(code, int) else 0)


def _fail_as_json(errors: list[tuple[str, str | None]], status: str, exit_code: int) -> NoReturn:
    from neuron_env.output.emit import Outcome, write_error_document

    write_error_document(errors, Outcome(status, exit_code))
    sys.exit(exit_code)


GLOBAL_OPTIONS = {"--matrix-dir": True, "--debug": False, "--version": False}
"""The options of neuron-env itself, and whether each takes a value."""


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


def _debug_requested() -> bool:
    return "--debug" in sys.argv[1:] or os.environ.get("NEURON_ENV_DEBUG", "") not in ("", "0")
