"""At 80 columns, a check id is never broken across lines: users copy it into --allow, --skip
and --check, and into project defaults."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from tests.support.cli import CliRunner, cli_argv, machine_env

pytestmark = pytest.mark.integration

EIGHTY = {"COLUMNS": "80", "NO_COLOR": "1"}
TERMINAL = {"COLUMNS": "80", "FORCE_COLOR": "1", "TERM": "xterm-256color"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@pytest.mark.parametrize("env", [EIGHTY, TERMINAL], ids=["piped", "terminal"])
def test_every_check_id_is_whole_in_the_list_and_the_report_at_80_columns(
    cli: CliRunner, env: dict[str, str]
) -> None:
    ids = [f["check"] for f in json.loads(cli("doctor", "--format", "json").stdout)["findings"]]
    assert len(ids) > 15
    for args in (("doctor", "--list-checks"), ("doctor",)):
        shown = ANSI.sub("", cli(*args, env=env).stdout)
        words = set(re.findall(r"[\w.\-]+", shown))
        missing = [i for i in ids if i not in words]
        assert not missing, f"{' '.join(args)}: {missing} broken across lines\n{shown}"


@pytest.mark.parametrize("columns", ["0", "-5"])
def test_a_columns_that_is_no_width_is_as_if_unset(cli: CliRunner, columns: str) -> None:
    """``COLUMNS=0`` (or a negative one) made rich's width 0, and the first wrapped line raised
    ``ValueError: invalid width 0`` with a traceback (exit 1, read as "not ready")."""
    unset = cli("doctor", env={"COLUMNS": None, "NO_COLOR": "1"})
    result = cli("doctor", env={"COLUMNS": columns, "NO_COLOR": "1"})

    assert "Traceback" not in result.stderr
    assert result.returncode == unset.returncode
    assert _without_timing(result.stdout) == _without_timing(unset.stdout)


@pytest.mark.parametrize("columns", ["1", "0", "-5"])
def test_an_error_on_a_terminal_too_narrow_to_say_is_printed_whole(
    cli: CliRunner, columns: str
) -> None:
    result = cli("doctor", "--release", "9.9", env={"COLUMNS": columns})

    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())
    assert said.startswith("error: No matrix file describes Neuron release '9.9'.")
    assert "Add a newer release file with --matrix-dir DIR" in said


def _without_timing(text: str) -> str:
    return re.sub(r" in \d+\.\d+ s", "", text)


def test_an_error_on_a_terminal_that_reports_0_columns_is_not_squeezed() -> None:
    """A new pty (``script``, some CI runners) says 0 columns: errors were wrapped to 13."""
    main, terminal = os.openpty()  # 0 rows, 0 columns until someone sets them
    try:
        env = {k: v for k, v in machine_env().items() if k != "COLUMNS"}
        done = subprocess.run(cli_argv("doctor", "--release", "9.9"), stdout=subprocess.DEVNULL,
                              stderr=terminal, env=env, timeout=60, check=False)  # fmt: skip
        said = os.read(main, 65536).decode()
    finally:
        os.close(main)
        os.close(terminal)

    assert done.returncode == 2
    first = said.splitlines()[0]
    assert first.startswith("error: No matrix file describes Neuron release '9.9'."), said
