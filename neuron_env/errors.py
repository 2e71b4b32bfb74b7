"""The one error hierarchy of neuron-env, and the exit code each class maps to.

Exit codes are a public contract (README, "Exit codes"):

* 0 — everything passed (warnings allowed unless ``--strict``)
* 1 — a check, test, install or cloud operation failed (:class:`OperationFailed`)
* 2 — bad input: unknown flag value, unsupported combination, malformed file (:class:`BadInput`)
* 3 — could not judge: nothing failed, but a check's probe could not run (timeout, permission,
  crash), so ``doctor``/``preflight`` cannot say "ready" or "not ready" (Nagios' UNKNOWN)
* 130 — interrupted by Ctrl-C (SIGINT); 143 — stopped by SIGTERM (:class:`Interrupted`)

Every error carries a one-paragraph ``message`` (what happened and the likely cause) and an optional
``hint`` (the next thing to run). The CLI prints both and never a traceback unless ``--debug``; a
command asked for JSON also prints them as the ``errors`` of its envelope, with ``status`` and
``exit_code`` from the error's class.
"""

from __future__ import annotations

from collections.abc import Iterable

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_UNKNOWN = 3
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 143


class NeuronEnvError(Exception):
    """Base class of every expected failure."""

    exit_code = EXIT_FAILED
    status = "error"
    """The ``status`` of the JSON envelope a failed command prints when asked for JSON."""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return self.message if self.hint is None else f"{self.message}\n{self.hint}"


class BadInput(NeuronEnvError):
    """The user asked for something neuron-env cannot accept (exit 2)."""

    exit_code = EXIT_BAD_INPUT


def check_format(output_format: str | None, formats: Iterable[str]) -> None:
    """An unknown ``--format`` is bad input: one ``error:`` line listing the formats the command
    has (None: the command chooses). Every command says it this way."""
    known = tuple(formats)
    if output_format is not None and output_format not in known:
        raise BadInput(f"--format '{output_format}' is not one of: {', '.join(known)}.")


class MatrixError(BadInput):
    """A support-matrix file is malformed; names the file and the key at fault."""

    def __init__(self, file: str, key: str, problem: str, *, hint: str | None = None) -> None:
        location = f"{file}: {key}" if key else file
        super().__init__(f"{location}: {problem}", hint=hint)
        self.file = file
        self.key = key
        self.problem = problem


class UnknownRelease(BadInput):
    """A Neuron release that no matrix file describes."""


class UnsupportedCombination(BadInput):
    """A request the matrix says cannot work; the message names what is supported instead."""


class MalformedFile(BadInput):
    """A snapshot, report or other input file that cannot be read."""


class OperationFailed(NeuronEnvError):
    """Something neuron-env tried to do failed (exit 1)."""


class CommandFailed(OperationFailed):
    """An external command failed or timed out; carries its command line and output tail."""

    def __init__(
        self,
        argv: list[str],
        message: str,
        *,
        returncode: int | None = None,
        output: str = "",
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.argv = argv
        self.returncode = returncode
        self.output = output


class Interrupted(NeuronEnvError):
    """An operation was interrupted (Ctrl-C or SIGTERM) and cleaned up: exit 130, or 143 when the
    signal that stopped it was SIGTERM (128 + the signal, as a shell reports it)."""

    exit_code = EXIT_INTERRUPTED
    status = "interrupted"

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        from neuron_env.signals import interrupt_exit_code

        super().__init__(message, hint=hint)
        self.exit_code = interrupt_exit_code()
