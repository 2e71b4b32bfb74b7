"""Running a command neuron-env printed as a user pastes it: in a new terminal's shell.

Shared by the tests that check every printed fix, hint and next step (``*_run_as_pasted``, and
the next-step tests of doctor, fleet and matrix): ``PATH`` holds only the system's directories
(:data:`neuron_env.invocation.SYSTEM_PATH`), no virtual environment is active, and the folder is
not the one the printing command ran in.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from neuron_env.invocation import SYSTEM_PATH
from tests.support.cli import NEURON_ENV
from tests.support.install_helpers import flat

QUOTED = re.compile(r"'(/[^']+)'")  # a command by its path (prose has apostrophes)
PLACEHOLDERS = re.compile(r"\bX\.Y\b|\bFILE\b")


def in_fresh_shell(
    command: str, cwd: Path, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``command`` under ``bash -c`` with the system PATH (``env`` adds the rest; HOME is
    ``cwd`` unless it says otherwise) and no active virtual environment."""
    fresh = {"HOME": str(cwd), **(env or {}), "PATH": SYSTEM_PATH}
    fresh.pop("VIRTUAL_ENV", None)
    return subprocess.run(["bash", "-c", command], capture_output=True, text=True, env=fresh,
                          cwd=cwd, timeout=120, check=False)  # fmt: skip


def quoted_command(text: str, subcommand: str) -> list[str]:
    """The words of the one command quoted in ``text`` that runs ``subcommand``."""
    found = [shlex.split(q) for q in QUOTED.findall(flat(text)) if f" {subcommand}" in q]
    assert len(found) == 1, text
    words = found[0]
    assert words[0] == str(NEURON_ENV), f"neuron-env is not named by its path: {words}"
    assert not PLACEHOLDERS.search(" ".join(words)), words
    return words


def run_pasted(
    words: list[str], env: dict[str, str], cwd: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    """``words`` (plus ``extra``) in a fresh shell."""
    return in_fresh_shell(shlex.join([*words, *extra]), cwd, env)


def shipped(env: dict[str, str]) -> dict[str, str]:
    """``env`` with the shipped matrix alone (its 2.34.0), not the install tests' release."""
    return {k: v for k, v in env.items() if k != "NEURON_ENV_MATRIX_DIR"}


def assert_runs(result: subprocess.CompletedProcess[str]) -> None:
    output = result.stdout + result.stderr
    assert result.returncode != 127 and "command not found" not in output, output
    assert result.returncode == 0, output


def elsewhere(tmp_path: Path) -> Path:
    """A new terminal's folder: not the one the refused command ran in."""
    (tmp_path / "fresh").mkdir(exist_ok=True)
    return tmp_path / "fresh"
