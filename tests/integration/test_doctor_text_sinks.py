"""The doctor's text report is the same characters wherever it goes.

Piped (no terminal, no ``COLUMNS``, no ``FORCE_COLOR``) it is written as plain text without rich,
which keeps a plain run fast; into a file it is that same text; on a terminal, or when
``FORCE_COLOR`` or ``COLUMNS`` asks, rich prints it, in colour where it may. Only the colour may
differ: the words, the wrapping and the hanging indents are the same.
"""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner, cli_argv

pytestmark = pytest.mark.integration

SNAPSHOT = DATA / "snapshots" / "torch-2.13-container.json"
SGR = re.compile("\x1b\\[[0-9;]*m")
# what a plain pipe has
PIPE: dict[str, str | None] = {"COLUMNS": None, "NO_COLOR": None, "FORCE_COLOR": None}


QUOTED_COMMAND = re.compile(r"'[^'\n]{40,}'")
"""A command quoted in prose (``'/path/to/neuron-env facts'``): kept whole, as long as its path."""


def wrapped(report: str) -> list[str]:
    """The lines of ``report`` that wrap at the width: all but the fixes, the verdict and lines
    holding a quoted command, which are printed whole (a command is pasted; the verdict is what a
    log is searched for); a command's length depends on where neuron-env is installed."""
    lines = report.rstrip().splitlines()[:-1]
    return [
        line for line in lines
        if not line.lstrip().startswith("fix: ") and not QUOTED_COMMAND.search(line)
    ]  # fmt: skip


def fixes(report: str) -> list[str]:
    return [line.strip() for line in report.splitlines() if line.lstrip().startswith("fix: ")]


def doctor(cli: CliRunner, *extra: str, env: dict[str, str | None]) -> str:
    result = cli("doctor", "--facts", str(SNAPSHOT), "-v", *extra, env=env)
    assert result.returncode == 1, result.stderr  # judged: Python 3.11 is not supported
    assert result.stderr == ""
    return result.stdout


def on_a_terminal(*args: str, columns: int) -> str:
    """What ``neuron-env *args`` writes to a real terminal (a pty) ``columns`` wide."""
    controller, terminal = pty.openpty()
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "FORCE_COLOR")}
    env.update(COLUMNS=str(columns), TERM="xterm-256color")
    with subprocess.Popen(cli_argv(*args), stdout=terminal, stderr=terminal, env=env) as proc:
        os.close(terminal)
        chunks = []
        while True:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # EIO: the other end is closed
                break
            if not chunk:
                break
            chunks.append(chunk)
        proc.wait(timeout=60)
    os.close(controller)
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_a_pipe_a_file_and_a_terminal_get_the_same_words(cli: CliRunner, tmp_path: Path) -> None:
    piped = doctor(cli, env=PIPE)
    assert "\x1b" not in piped
    assert max(len(line) for line in wrapped(piped)) <= 120
    assert "fix: " in piped and "Not ready" in piped

    report = tmp_path / "report.txt"
    assert doctor(cli, "-o", str(report), env=PIPE) == ""
    assert report.read_text() == piped

    assert doctor(cli, env={**PIPE, "COLUMNS": "120"}) == piped  # rich, told the same width

    coloured = doctor(cli, env={**PIPE, "FORCE_COLOR": "1"})
    assert SGR.search(coloured), "FORCE_COLOR gives colour in a pipe"
    assert SGR.sub("", coloured) == piped

    shown = on_a_terminal("doctor", "--facts", str(SNAPSHOT), "-v", columns=120)
    assert SGR.search(shown), "a terminal gets colour"
    assert SGR.sub("", shown) == piped


def test_a_pipe_wraps_at_columns_when_asked(cli: CliRunner) -> None:
    # 2.33.1 pins its apt packages: a fix with a long pin to keep whole.
    wide = doctor(cli, "--release", "2.33.1", env=PIPE)
    narrow = doctor(cli, "--release", "2.33.1", env={**PIPE, "COLUMNS": "80"})
    assert narrow != wide
    assert " ".join(narrow.split()) == " ".join(wide.split())  # the same words, rewrapped
    assert "'aws-neuronx-runtime-lib=2.35.33.0*'" in narrow.split()  # a pin is never split
    long_words = {w for w in narrow.split() if len(w) > 40}  # paths and commands stay whole
    long_words |= set(re.findall(r"'[^'\n]{40,}'", narrow))  # so does a command quoted in prose
    for line in wrapped(narrow):
        assert len(line) <= 80 or any(word in line for word in long_words), line
    assert fixes(narrow) == fixes(wide)  # whole at any width: pasted, they run


def test_a_plain_report_does_not_load_rich(tmp_path: Path) -> None:
    """rich costs a plain run a tenth of its start-up (benchmarks/doctor.py): only a terminal,
    or an environment that asks for what rich does, loads it."""
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "FORCE_COLOR")}
    args = [sys.executable, "-X", "importtime", "-m", "neuron_env", "doctor"]
    plain = subprocess.run(
        [*args, "--facts", str(SNAPSHOT)], capture_output=True, text=True, env=env, check=False
    )
    assert plain.returncode == 1 and "Not ready" in plain.stdout
    assert " rich" not in plain.stderr
    coloured = subprocess.run(
        [*args, "--facts", str(SNAPSHOT)],
        capture_output=True,
        text=True,
        env={**env, "FORCE_COLOR": "1"},
        check=False,
    )
    assert " rich.console" in coloured.stderr  # the check above can see rich being imported
