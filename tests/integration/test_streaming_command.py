"""StreamingCommand: a child's stdout line by line, a deadline per line, the group killed."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from neuron_env.command import LineTimeout, StreamingCommand
from neuron_env.errors import CommandFailed

pytestmark = pytest.mark.integration


def python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


def test_lines_arrive_as_written_and_none_marks_the_end() -> None:
    code = (
        "import sys; print('one', flush=True); print(sys.stdin.read().upper()); "
        "print('tail', end='')"
    )
    with StreamingCommand(python(code), input="two") as child:
        lines = [child.next_line(10), child.next_line(10), child.next_line(10), child.next_line(10)]
        assert child.wait(10) == 0
    assert lines == ["one", "TWO", "tail", None]


def test_a_silent_child_times_out_per_line_and_keeps_what_came_before() -> None:
    code = "import time; print('ready', flush=True); time.sleep(60)"
    with StreamingCommand(python(code)) as child:
        assert child.next_line(10) == "ready"
        start = time.monotonic()
        with pytest.raises(LineTimeout):
            child.next_line(0.5)
        assert time.monotonic() - start < 5


def test_kill_stops_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "grandchild"
    code = (
        "import subprocess, sys, time\n"
        f"p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(300)'])\n"
        f"open({str(pid_file)!r}, 'w').write(str(p.pid))\n"
        "print('started', flush=True)\n"
        "time.sleep(300)\n"
    )
    with StreamingCommand(python(code)) as child:
        assert child.next_line(30) == "started"
        grandchild = int(pid_file.read_text())
        child.kill()
        assert child.wait(10) == -9
    deadline = time.monotonic() + 10
    while _alive(grandchild) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(grandchild)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_a_flood_on_stderr_cannot_block_the_child() -> None:
    code = "import sys; sys.stderr.write('x' * 2_000_000); sys.stderr.flush(); print('done')"
    with StreamingCommand(python(code)) as child:
        assert child.next_line(30) == "done"
        assert child.wait(10) == 0
        assert child.stderr_tail(100) == "x" * 100


def test_a_missing_program_is_a_clear_error() -> None:
    with pytest.raises(CommandFailed, match="cannot run /nonexistent/python"):
        StreamingCommand(["/nonexistent/python", "-V"])


def test_the_environment_is_passed_when_given() -> None:
    code = "import os; print(os.environ.get('STREAM_TEST', 'missing'))"
    env = {**os.environ, "STREAM_TEST": "present"}
    with StreamingCommand(python(code), env=env) as child:
        assert child.next_line(10) == "present"
