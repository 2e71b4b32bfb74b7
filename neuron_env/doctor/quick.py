"""The doctor's common command lines, read without typer: a doctor run's largest import saved.

``neuron-env doctor`` is the command people run most, and importing typer (with the click it
vendors) and building the command from its signature cost about as much CPU as the doctor's own
checks (~30 ms of ~0.2 s). :func:`parse` reads a command line only when it is certain what typer
would make of it: the doctor's own long options (and ``-o``, ``-v``) with plain values, each
given at most once, every value one that typer accepts as it is. Anything else (``--help``,
``--list-checks``, a global option, an unknown or repeated option, a value typer would refuse or
convert, a shell-completion request, ``$NEURON_ENV_DEBUG``) returns None, and typer reads the
command line as before, with its help, its errors and its exit codes. ``tests/unit/
test_doctor_quick.py`` holds the two readers to the same values, option by option.
"""

from __future__ import annotations

import math
import os
import stat
from collections.abc import Callable, Mapping
from pathlib import Path

from neuron_env.doctor.entry import DoctorArgs, run_doctor_command

#: Each option read here: the DoctorArgs field it sets and what its value is (as in doctor/cli.py
#: and cli/options.py; a test keeps the two in step).
OPTIONS = {
    "--python": ("python", "file"),
    "--sysroot": ("sysroot", "folder"),
    "--probe-timeout": ("probe_timeout", "seconds"),
    "--facts": ("facts_file", "file"),
    "--release": ("release", "text"),
    "--torch": ("torch", "text"),
    "--level": ("level", "level"),
    "--check": ("check", "repeated"),
    "--skip": ("skip", "repeated"),
    "--format": ("output_format", "format"),
    "--output": ("output", "file"),
    "-o": ("output", "file"),
    "--strict": ("strict", "flag"),
    "--verbose": ("verbose", "flag"),
    "-v": ("verbose", "flag"),
    "--redact": ("redact", "flag"),
    "--no-config": ("no_config", "flag"),
}
FORMATS = ("text", "json", "junit", "github")  # ReportFormat's members
LEVELS = {"0": 0, "1": 1, "2": 2}  # --level's range
SHORTEST_WAIT = 0.5  # --probe-timeout's lower bound


class _Unsure(Exception):
    """Typer might read this command line differently: let it."""


def parse(args: list[str], environ: Mapping[str, str]) -> Callable[[], int] | None:
    """The doctor run that ``neuron-env doctor ARGS`` asks for, ready to start; None when typer
    must read the command line (see the module's docstring)."""
    if environ.get("NEURON_ENV_DEBUG") or any(
        name.startswith("_") and name.endswith("_COMPLETE") for name in environ
    ):
        return None
    try:
        doctor_args = read(args)
    except _Unsure:
        return None
    _note_format(doctor_args.output_format)
    return lambda: run_doctor_command(doctor_args)


def read(args: list[str]) -> DoctorArgs:
    """The options ``args`` give, as typer would read them; :class:`_Unsure` when it might not."""
    values: dict[str, object] = {}
    repeated: dict[str, tuple[str, ...]] = {}
    at = 0
    while at < len(args):
        token = args[at]
        at += 1
        # --name=value; a short option's "=" would be part of its value (-o=FILE): left to typer
        name, equals, value = token.partition("=") if token.startswith("--") else (token, "", "")
        if name not in OPTIONS:
            raise _Unsure  # --help, --list-checks, a global or unknown option, an argument
        field, kind = OPTIONS[name]
        if kind == "flag":
            if equals:
                raise _Unsure
            converted: object = True
        else:
            if not equals:
                if at == len(args):
                    raise _Unsure
                value, at = args[at], at + 1
            if not value or value.startswith("-"):
                raise _Unsure
            if kind == "repeated":
                repeated[field] = (*repeated.get(field, ()), value)
                continue
            converted = _convert(kind, value)
        if field in values:  # typer keeps the last; rare enough to leave to it
            raise _Unsure
        values[field] = converted
    return DoctorArgs(**values, **repeated)  # type: ignore[arg-type]


def _convert(kind: str, value: str) -> object:
    if kind in ("file", "folder"):
        return _path(value, file_okay=kind == "file", dir_okay=kind == "folder")
    if kind == "format" and value in FORMATS:
        return value
    if kind == "level" and value in LEVELS:
        return LEVELS[value]
    if kind == "seconds":
        try:
            seconds = float(value)
        except ValueError:
            raise _Unsure from None
        if math.isfinite(seconds) and seconds >= SHORTEST_WAIT:
            return seconds
    if kind == "text":
        return value
    raise _Unsure


def _path(value: str, *, file_okay: bool, dir_okay: bool) -> Path:
    """``value`` as typer's path type converts it (``exists=False``, ``readable=True``); one it
    would refuse (a folder where a file is asked for, say) is typer's to refuse."""
    try:
        found = os.stat(value)  # noqa: PTH116 - as typer: Path() drops a trailing slash
    except OSError:
        return Path(value)
    if not file_okay and stat.S_ISREG(found.st_mode):
        raise _Unsure
    if not dir_okay and stat.S_ISDIR(found.st_mode):
        raise _Unsure
    if not os.access(value, os.R_OK):
        raise _Unsure
    return Path(value)


def _note_format(output_format: str) -> None:
    """What ``--format``'s eager callback records (``cli/_common.format_choice``): an error
    found later is still written in the format asked for."""
    from neuron_env.output.emit import record_format

    record_format("doctor", output_format)
