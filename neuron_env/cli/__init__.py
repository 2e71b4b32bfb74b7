"""The ``neuron-env`` command line: thin adapters from options to the library.

The top-level group knows each command by name and one line of help (:data:`COMMANDS`) and imports
a command's module only when that command runs or shows its own help, so ``neuron-env --help``,
``neuron-env --version`` and ``neuron-env doctor --help`` do not build the options of every other
command. Heavy imports (torch, boto3, jinja2, the matrix itself) happen inside the commands.

This module does not import typer: the group, its options and click's errors are
:mod:`neuron_env.cli.group`'s. A command may also name a quick reader of its common command lines
(:data:`QUICK`: ``doctor``, the command run most), which runs it without typer when it is sure
what typer would make of them and otherwise leaves the command line to typer.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import sys
from collections.abc import Callable
from importlib import import_module
from typing import Any, NoReturn

from neuron_env.errors import Interrupted, NeuronEnvError
from neuron_env.frozen import frozen
from neuron_env.signals import interrupt_lost, interrupts_unwind


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


QUICK = {"doctor": "neuron_env.doctor.quick"}
"""Commands with a quick reader: its ``parse(args, environ)`` returns the run, or None (typer's)."""


def load_command(name: str) -> Any:
    """Import the module of top-level command ``name`` and build its click command."""
    import typer

    spec = COMMANDS[name]
    target = getattr(import_module(spec.module), spec.attribute)
    holder = typer.Typer(add_completion=False, rich_markup_mode=None)
    if spec.group:
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    from neuron_env.cli.help_text import protect_examples

    command = protect_examples(typer.main.get_group(holder).commands[name])
    collect_from_now_on()
    return command


def collect_from_now_on() -> None:
    """Turn the garbage collector back on, once the command's code is loaded.

    :func:`main` turns it off first: loading a command allocates tens of thousands of objects
    (module bodies, classes, functions, compiled patterns) and frees almost none, so the
    collections that allocation sets off (about 10 ms of a 0.15 s ``doctor`` run) find nothing
    to free. What is loaded by now is frozen (never examined again) and the command's own work
    is collected as usual: long runs (``fleet``, ``scan``, ``install``) keep their memory bounded.
    ``doctor`` (the quick path) runs without it: a whole run leaves ~500 objects in cycles.
    Only a collector :func:`main` turned off is turned on (not one a caller of
    :func:`load_command` keeps off).
    """
    global _collector_held
    if _collector_held:
        _collector_held = False
        gc.freeze()
        gc.enable()


_collector_held = False
"""Whether :func:`main` turned the collector off and :func:`collect_from_now_on` has not yet
turned it back on."""


def __getattr__(name: str) -> Any:
    """The typer group's names (``app``, ``LazyGroup``, ...), from :mod:`neuron_env.cli.group`."""
    if name.startswith("__") or name == "group":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return getattr(import_module("neuron_env.cli.group"), name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def _unicode_stream(stream: object) -> bool:
    """The stream's encoding is UTF-8 (or another UTF): it can write every character."""
    return str(getattr(stream, "encoding", None) or "").lower().startswith("utf")


def _write_undecodable_bytes_back() -> None:
    """A file name that is not UTF-8 (``caf\\xe9.py`` from a Latin-1 zip) is a lone surrogate to
    Python (PEP 383), and a strict UTF-8 stream (every locale but C's: ``LANG=en_US.UTF-8``,
    ``PYTHONIOENCODING=utf-8``) raised UnicodeEncodeError on it: ``scan`` ended in a traceback.
    Such a stream writes it back as the byte it was, as the C locale's streams do."""
    for stream in (sys.stdout, sys.stderr):
        if getattr(stream, "errors", None) == "strict" and _unicode_stream(stream):
            with contextlib.suppress(AttributeError, ValueError):  # a stand-in, a closed one
                stream.reconfigure(errors="surrogateescape")  # type: ignore[union-attr]


def main() -> None:
    """Console-script entry point: run the app, turn expected errors into exit codes.

    This is the one place where a failure becomes an exit code: on stderr as one ``error:``
    paragraph (or click's usage message), and, for a command asked for JSON, as the envelope's
    ``errors`` on stdout. SIGINT and SIGTERM unwind every command alike
    (:func:`interrupts_unwind`): its children are killed with their process groups, its temporary
    files removed, then exit 130 or 143.
    """
    global _collector_held
    collecting = gc.isenabled()
    _collector_held = collecting
    gc.disable()  # until the command's code is loaded: see collect_from_now_on()
    if sys.stdout is None or sys.stderr is None:
        from neuron_env.output.closed import stand_in_for_closed  # started with >&- or 2>&-

        stand_in_for_closed()
    if not all(_unicode_stream(stream) for stream in (sys.stdout, sys.stderr)):
        from neuron_env.output.narrow import tolerate  # ASCII or Latin-1: marks, not a traceback

        tolerate()
    _write_undecodable_bytes_back()
    try:
        with interrupts_unwind():
            code = _run(sys.argv[1:])
            if interrupt_lost():  # the signal was swallowed where Python cannot raise it
                raise interrupted()
            sys.stdout.flush()  # what '> report.txt' still holds: a full disk is said here
    except NeuronEnvError as exc:
        _fail(exc)
    except FileNotFoundError:
        if _cwd_exists():
            raise
        _fail(_cwd_gone())
    except OSError as exc:  # a write the system refused; one naming no file is stdout's
        from neuron_env.output.closed import stdout_refused

        refused = stdout_refused(exc)
        if refused is None:
            raise
        _fail(refused)
    except Exception as exc:  # click's usage errors and Abort: only typer's path raises them
        if "typer" not in sys.modules:
            raise
        from neuron_env.cli.group import report_click_failure

        if not report_click_failure(exc):
            raise
    finally:
        # The interpreter's shutdown runs full garbage collections over every object the run
        # made (~12 ms of a 0.15 s doctor run); the process is ending, so exempt them. Files and
        # streams are closed as before: by their owners, then by the shutdown itself.
        gc.freeze()
        _collector_held = False
        if collecting:  # as it was for a caller that goes on (a test calling main())
            gc.enable()
    sys.exit(code if isinstance(code, int) else 0)


def _fail(exc: NeuronEnvError) -> NoReturn:
    """An expected error: one ``error:`` paragraph on stderr, the JSON envelope, its exit code."""
    if _debug_requested():
        import traceback  # --debug only: it imports linecache, tokenize and more

        traceback.print_exc()
    from neuron_env.cli._common import print_error

    print_error(exc)
    _fail_as_json([(exc.message, exc.hint)], exc.status, exc.exit_code)


def _cwd_exists() -> bool:
    from pathlib import Path

    try:
        Path.cwd()
    except FileNotFoundError:
        return False
    return True


def _cwd_gone() -> NeuronEnvError:
    """The error for a run whose working directory was removed (or moved) after the shell
    entered it: every relative path, and the project defaults' search, start there."""
    from neuron_env.errors import BadInput

    return BadInput(
        "The current folder no longer exists: it was removed (or moved) after this shell "
        "entered it.",
        hint="cd to a folder that exists (e.g. cd ~) and run the command again.",
    )


def _fail_as_json(errors: list[tuple[str, str | None]], status: str, exit_code: int) -> NoReturn:
    from neuron_env.output.emit import Outcome, write_error_document

    write_error_document(errors, Outcome(status, exit_code))
    sys.exit(exit_code)


GLOBAL_OPTIONS = {"--matrix-dir": True, "--debug": False, "--version": False}
"""The options of neuron-env itself, and whether each takes a value."""


def interrupted() -> Interrupted:
    """What a command that no step of it reported itself ends with on a signal (click would end
    it silently with exit 130, SIGTERM included)."""
    return Interrupted(
        "Interrupted. What the command had started was stopped and its temporary files removed."
    )


def _run(args: list[str]) -> Any:
    """Run the command ``args`` name: by its quick reader when it has one that is sure of them,
    else by typer (which also says every usage error)."""
    quick = None
    try:
        if args and args[0] in QUICK:
            quick = import_module(QUICK[args[0]]).parse(args[1:], os.environ)
        if quick is None:
            from neuron_env.cli.group import app

            return app(standalone_mode=False)
    except KeyboardInterrupt:  # while the command loads, before click or _run_quick takes it
        raise interrupted() from None
    return _run_quick(quick)


def _run_quick(run: Callable[[], int]) -> int:
    """``run()`` as typer runs a command: the global options' state set (none were given), a
    signal ends it with :func:`interrupted`, a closed stdout pipe with exit 1 and no traceback."""
    from neuron_env.invocation import carry_global_options

    carry_global_options(())
    try:
        return run()
    except KeyboardInterrupt:
        raise interrupted() from None
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        from typer._click.utils import PacifyFlushWrapper  # typer's answer to a closed pipe

        sys.stdout = PacifyFlushWrapper(sys.stdout)
        sys.stderr = PacifyFlushWrapper(sys.stderr)
        sys.exit(1)


def _debug_requested() -> bool:
    return "--debug" in sys.argv[1:] or os.environ.get("NEURON_ENV_DEBUG", "") not in ("", "0")
