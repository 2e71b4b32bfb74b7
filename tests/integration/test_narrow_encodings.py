"""A stdout that cannot encode all of Unicode: ``LANG=en_US`` on glibc is Latin-1, and
``PYTHONIOENCODING`` names any codec. The reports' marks (``✓ ✗ — → ↔``) were written with the
locale's strict encoder: the first one ended the run with a ``UnicodeEncodeError`` traceback and
exit 1, which a CI job reads as "not ready". Now they become ASCII stand-ins, a character that is
not neuron-env's own (a path) its ``\\x..`` escape, and the exit code stays the verdict's.

The console script runs itself here (not a fork of the test's server): ``PYTHONIOENCODING`` is
read when the interpreter starts.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from neuron_env.output.narrow import STAND_INS
from tests.support.cli import REPO, CliRunner
from tests.support.hosts import Host, scenario_host

pytestmark = pytest.mark.integration


@pytest.fixture
def failing_host(tmp_path: Path) -> Iterator[Host]:
    """driver-not-loaded (exit 1: failed checks), built under a folder whose name is not
    ASCII, so the report quotes a path with an é in it."""
    yield from scenario_host("driver-not-loaded", tmp_path / "café")


def test_an_ascii_stdout_gets_ascii_marks_and_the_verdict_s_exit_code(
    cli: CliRunner, failing_host: Host
) -> None:
    utf8 = cli(*failing_host.args("doctor"), env=failing_host.env)
    ascii_run = cli(*failing_host.args("doctor"),
                    env={**failing_host.env, "PYTHONIOENCODING": "ascii"})  # fmt: skip

    assert utf8.returncode == ascii_run.returncode == 1, ascii_run.stderr
    assert "Traceback" not in ascii_run.stderr
    assert ascii_run.stdout.isascii()
    assert "✗ driver.module" in utf8.stdout and "x driver.module" in ascii_run.stdout
    assert "✓ platform.os" in utf8.stdout and "+ platform.os" in ascii_run.stdout
    assert "neuron-env doctor · " in utf8.stdout and "neuron-env doctor - " in ascii_run.stdout
    assert "caf\\xe9" in ascii_run.stdout  # the path's é, escaped: still told apart
    # line for line the same report, only the characters differ
    assert len(ascii_run.stdout.splitlines()) == len(utf8.stdout.splitlines())


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_a_rich_table_on_a_narrow_stdout_is_written_whole(cli: CliRunner, encoding: str) -> None:
    """``matrix list`` prints through rich, which raised on its own: "You may need to add
    PYTHONIOENCODING=utf-8 to your environment"."""
    result = cli("matrix", "list", env={"PYTHONIOENCODING": encoding})

    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert re.search(r"2\.14 <-> 2\.14\.3\.\d", result.stdout)  # ↔ as <->
    assert "Details of one release:" in result.stdout  # the last line: nothing cut off


def test_json_on_an_ascii_stdout_is_unchanged(cli: CliRunner, failing_host: Host) -> None:
    utf8 = cli(*failing_host.args("doctor"), "--format", "json", env=failing_host.env)
    ascii_run = cli(*failing_host.args("doctor"), "--format", "json",
                    env={**failing_host.env, "PYTHONIOENCODING": "ascii"})  # fmt: skip

    assert ascii_run.returncode == utf8.returncode == 1
    assert ascii_run.stdout.isascii()  # JSON escapes what is not ASCII itself
    verdicts = [findings(run.stdout) for run in (utf8, ascii_run)]
    assert verdicts[0] == verdicts[1]
    assert any("café" in summary for _, _, summary, _ in verdicts[1])  # é, not a stand-in


def findings(stdout: str) -> list[tuple[str, str, str, str]]:
    doc = json.loads(stdout)
    return [(f["check"], f["status"], f["summary"], f["fix"]) for f in doc["findings"]]


def test_every_non_ascii_character_neuron_env_prints_has_a_stand_in() -> None:
    """The package's text and the data files it reports from (matrices, scan rules): a new mark
    without a stand-in would reach an ASCII stdout as a ``\\u`` escape."""
    files = [*(REPO / "neuron_env").rglob("*.py"), *(REPO / "matrices").rglob("*.toml"),
             *(REPO / "rules").rglob("*")]  # fmt: skip
    found: dict[str, str] = {}
    for path in files:
        if path.is_file():
            for char in path.read_text(encoding="utf-8"):
                if not char.isascii():
                    found.setdefault(char, str(path.relative_to(REPO)))
    missing = {char: where for char, where in found.items() if char not in STAND_INS}
    assert missing == {}
    assert all(stand_in.isascii() for stand_in in STAND_INS.values())
