"""The subprocess gateway: timeouts kill the whole process group; failures carry their output."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from neuron_env.command import clean_env, run
from neuron_env.errors import CommandFailed


def test_success_returns_output() -> None:
    assert run(["echo", "hello"], timeout=5).stdout == "hello\n"


def test_non_zero_exit_raises_with_the_output_tail() -> None:
    with pytest.raises(CommandFailed) as caught:
        run(["sh", "-c", "echo oops >&2; exit 3"], timeout=5)
    assert caught.value.returncode == 3
    assert "oops" in caught.value.output
    assert "exit code 3" in caught.value.message


def test_timeout_kills_the_command_and_its_children() -> None:
    started = time.monotonic()
    with pytest.raises(CommandFailed, match=r"did not finish within 0\.5 s"):
        # The child keeps stdout open: without a process-group kill, communicate() would wait.
        run(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.5)
    assert time.monotonic() - started < 10


def test_a_missing_program_is_a_clear_failure() -> None:
    with pytest.raises(CommandFailed, match="cannot run /no/such/tool"):
        run(["/no/such/tool"], timeout=5)


def test_clean_env_keeps_path_and_proxies_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("https_proxy", "http://proxy:3128")
    monkeypatch.setenv("PIP_INDEX_URL", "http://mirror/simple")
    env = clean_env({"EXTRA": "1"})
    assert env["https_proxy"] == "http://proxy:3128" and env["EXTRA"] == "1"
    assert "PIP_INDEX_URL" not in env and "PATH" in env


def test_a_logged_command_appends_to_its_log_and_returns_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    log.write_text("earlier\n")
    result = run(["sh", "-c", "echo out; echo err >&2"], timeout=5, output=log)
    assert result.stdout == "out\nerr\n" and result.stderr == ""
    assert log.read_text() == "earlier\n$ sh -c 'echo out; echo err >&2'\nout\nerr\n"


def test_a_logged_command_that_fails_or_hangs_carries_the_logs_tail(tmp_path: Path) -> None:
    log = tmp_path / "install.log"
    with pytest.raises(CommandFailed) as failed:
        run(["sh", "-c", "echo broken; exit 4"], timeout=5, output=log)
    assert failed.value.returncode == 4 and failed.value.output == "broken\n"
    started = time.monotonic()
    with pytest.raises(CommandFailed, match=r"did not finish within 0\.5 s") as hung:
        run(["sh", "-c", "echo waiting; sleep 30 & sleep 30"], timeout=0.5, output=log)
    assert hung.value.output == "waiting\n"
    assert time.monotonic() - started < 10
    with pytest.raises(CommandFailed, match="cannot run /no/such/tool"):
        run(["/no/such/tool"], timeout=5, output=log)
