"""The doctor's quick reader (``doctor/quick.py``) reads a command line as typer does, or not at
all.

Whatever it accepts must give the doctor the very options typer's parse gives (same values, same
defaults); whatever it is unsure of goes to typer, which keeps its help, errors and exit codes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from neuron_env.cli import load_command
from neuron_env.doctor import quick
from neuron_env.doctor.entry import DoctorArgs
from neuron_env.output.formats import ReportFormat
from tests.support.cli import DATA, REPO

SNAPSHOT = DATA / "snapshots" / "torch-2.13-container.json"


PATHS = ("python", "sysroot", "facts_file", "output")


def typer_reads(args: list[str]) -> DoctorArgs:
    """The DoctorArgs ``doctor/cli.py`` builds from typer's parse of ``args`` (click's values,
    each path then made a ``Path`` as typer hands it to the command)."""
    params: dict[str, Any] = load_command("doctor").make_context("doctor", list(args)).params
    assert params.pop("list_checks") is False
    for name in PATHS:
        if isinstance(params[name], str):
            params[name] = Path(params[name])
    return DoctorArgs(
        **{**params, "check": tuple(params["check"] or ()), "skip": tuple(params["skip"] or ())}
    )


def accepted_lines(tmp_path: Path) -> list[list[str]]:
    python, folder = tmp_path / "python", tmp_path / "root"
    python.write_text("")
    folder.mkdir()
    return [
        [],
        ["--python", str(python), "--sysroot", str(folder)],
        [f"--python={python}", f"--sysroot={folder}"],
        ["--python", str(tmp_path / "not-there"), "--sysroot", str(tmp_path / "nor-this")],
        ["--format", "json", "-o", str(tmp_path / "out.json"), "--strict", "--verbose"],
        ["--format=junit", "--output", str(tmp_path / "r.xml"), "-v", "--redact", "--no-config"],
        ["--format", "github", "--release", "2.34.0", "--torch", "2.14"],
        ["--facts", str(SNAPSHOT), "--level", "0"],
        [
            "--level=2",
            "--probe-timeout",
            "0.5",
            "--check",
            "platform.os",
            "--check",
            "driver.module",
        ],
        ["--probe-timeout=1e1", "--skip", "env.cache", "--skip=python.requirements"],
        ["--format", "text", "--probe-timeout", "2"],
    ]


def test_what_it_accepts_it_reads_as_typer_does(tmp_path: Path) -> None:
    for args in accepted_lines(tmp_path):
        assert quick.read(args) == typer_reads(args), args
    assert quick.read([]) == DoctorArgs()  # the options' own defaults


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["-h"],
        ["--list-checks"],
        ["--debug"],
        ["--matrix-dir", "x"],
        ["--verbos"],
        ["extra-argument"],
        ["--"],
        ["--python"],  # no value
        ["--python", ""],
        ["--release", "-1"],
        ["--python", "a", "--python", "b"],  # typer keeps the last one
        ["--strict", "--strict"],
        ["--strict=1"],
        ["-o=out.json"],  # a short option's "=" is part of its value
        ["-vo", "out.json"],
        ["--level", "3"],
        ["--level", "01"],
        ["--format", "xml"],
        ["--format", "JSON"],
        ["--probe-timeout", "0.4"],
        ["--probe-timeout", "nan"],
        ["--probe-timeout", "inf"],
        ["--probe-timeout", "soon"],
        ["--sysroot", str(SNAPSHOT)],  # a file where a folder is asked for
        ["--python", str(DATA)],  # a folder where a file is asked for
        ["--facts", str(DATA)],
    ],
)
def test_what_it_is_unsure_of_it_leaves_to_typer(args: list[str]) -> None:
    assert quick.parse(args, {}) is None


def test_debug_and_shell_completion_are_left_to_typer() -> None:
    assert quick.parse([], {"NEURON_ENV_DEBUG": "1"}) is None
    assert quick.parse([], {"_NEURON_ENV_COMPLETE": "bash_source"}) is None
    assert quick.parse([], {"NEURON_ENV_DEBUG": ""}) is not None


def test_its_option_table_is_the_commands() -> None:
    """Every doctor option but --help and --list-checks is read, with its kind of value."""
    command = load_command("doctor")
    kinds = {}
    for param in command.params:
        if param.name == "list_checks":
            continue
        kind = (
            "flag" if param.is_flag else "repeated" if param.multiple else type(param.type).__name__
        )
        for name in param.opts:
            kinds[name] = (param.name, kind)
    read = {name: (field, kind) for name, (field, kind) in quick.OPTIONS.items()}
    assert read.keys() == kinds.keys()
    typer_kind = {
        "file": "TyperPath",
        "folder": "TyperPath",
        "text": "StringParamType",
        "level": "IntRange",
        "seconds": "FloatParamType",
        "format": "StringParamType",
        "flag": "flag",
        "repeated": "repeated",
    }
    for name, (field, kind) in read.items():
        assert (field, typer_kind[kind]) == kinds[name], name
    assert tuple(member.value for member in ReportFormat) == quick.FORMATS
    level = next(p for p in command.params if p.name == "level")
    assert (level.type.min, level.type.max) == (0, 2) and list(quick.LEVELS) == ["0", "1", "2"]
    with pytest.raises(Exception, match=r"at least 0\.5"):
        typer_reads(["--probe-timeout", str(quick.SHORTEST_WAIT - 0.01)])
    typer_reads(["--probe-timeout", str(quick.SHORTEST_WAIT)])


def neuron_env(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    code = (
        "import sys; from neuron_env.cli import main; sys.argv[0] = 'neuron-env'\n"
        "try:\n    main()\nfinally:\n"
        "    print('TYPER', 'typer' in sys.modules, file=sys.stderr)"
    )
    environ = {**os.environ, "PYTHONPATH": str(REPO), **env}
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        env=environ,
        check=False,
    )


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_a_quick_run_reports_what_typers_run_reports_without_importing_typer(
    output_format: str,
) -> None:
    args = ["doctor", "--facts", str(SNAPSHOT), "--format", output_format, "--no-config"]
    fast = neuron_env(*args)
    slow = neuron_env(*args, NEURON_ENV_DEBUG="0")  # --debug from the environment: typer's
    assert fast.stderr.splitlines()[-1] == "TYPER False"
    assert slow.stderr.splitlines()[-1] == "TYPER True"
    assert fast.returncode == slow.returncode != 0  # the snapshot's container is not ready
    assert _timeless(fast.stdout) == _timeless(slow.stdout)
    assert fast.stderr == slow.stderr.replace("TYPER True", "TYPER False")


def _timeless(report: str) -> str:
    """The report without its run time (`in 0.01 s`, `"duration_s": 0.01`)."""
    import re

    return re.sub(r"(in |\"duration_s\": )[0-9.]+", r"\1N", report)
