"""The single place that runs external commands.

Every subprocess goes through :func:`run`: an argument list (never a shell string), a timeout, an
explicit environment, and failures turned into :class:`CommandFailed` with the command line and the
tail of its output. Each process starts through :func:`_spawn` (a session of its own) and is waited
for by :func:`_finish` (its group killed on a timeout or an interruption); :class:`StreamingCommand`
starts the same way.
"""

from __future__ import annotations

import contextlib
import os
import select
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from neuron_env.errors import CommandFailed
from neuron_env.frozen import frozen
from neuron_env.input_files import read_tail
from neuron_env.signals import WAKE_SECONDS, killed_on_interrupt, raise_lost_interrupt


def _debug(message: str, *args: object) -> None:
    """``logging.getLogger(__name__).debug(...)``, once something has imported ``logging``: a
    program that shows debug records has configured it, so nothing is lost, and a run that never
    logs is spared its import (~5 ms of every doctor run)."""
    logging = sys.modules.get("logging")
    if logging is not None:
        logging.getLogger(__name__).debug(message, *args)


OUTPUT_TAIL = 4000
STDERR_KEPT = 64 * 1024  # of a streaming command's stderr: enough for a traceback


@frozen
class Completed:
    """A finished command: its argv, exit status, and decoded output."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str


def run(
    argv: Sequence[str | os.PathLike[str]],
    *,
    timeout: float,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    check: bool = True,
    input: str | None = None,
    output: Path | None = None,
) -> Completed:
    """Run ``argv`` and wait at most ``timeout`` seconds; the whole process group is killed after.

    ``env`` replaces the environment when given (callers build it with :func:`clean_env`).
    With ``output``, stdout and stderr are appended to that file as they come (a log someone can
    follow) instead of being captured; the result's ``stdout`` then holds the command's tail.
    """
    args = [os.fspath(a) for a in argv]
    _debug("run: %s", shlex.join(args))
    if output is not None:
        return _run_logged(args, timeout=timeout, env=env, cwd=cwd, check=check, output=output)
    stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
    proc = _spawn(args, stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                  cwd=cwd, text=True)  # fmt: skip
    stdout, stderr = _finish(proc, args, timeout, input=input, tail=_tail)
    _check_exit(args, proc.returncode, check, _tail(stdout, stderr))
    return Completed(tuple(args), proc.returncode, stdout, stderr)


def _run_logged(
    args: list[str],
    *,
    timeout: float,
    env: Mapping[str, str] | None,
    cwd: Path | None,
    check: bool,
    output: Path,
) -> Completed:
    with output.open("a", encoding="utf-8") as sink:
        sink.write(f"$ {shlex.join(args)}\n")
        sink.flush()
        start = sink.tell()
        proc = _spawn(args, stdin=subprocess.DEVNULL, stdout=sink, stderr=subprocess.STDOUT,
                      env=env, cwd=cwd)  # fmt: skip
        _finish(proc, args, timeout, tail=lambda *_: _file_tail(output, start))
    tail = _file_tail(output, start)
    _check_exit(args, proc.returncode, check, tail)
    return Completed(tuple(args), proc.returncode, tail, "")


def _spawn(
    args: list[str],
    *,
    stdin: Any,
    stdout: Any,
    stderr: Any,
    env: Mapping[str, str] | None,
    cwd: Path | None = None,
    text: bool = False,
) -> subprocess.Popen[Any]:
    """Start ``args`` in a session of its own (so that the command and its children can be
    killed together); a command that cannot start is a :class:`CommandFailed`."""
    try:
        return subprocess.Popen(
            args,
            stdin=stdin,
            stdout=stdout,
            stderr=stderr,
            text=text,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            start_new_session=True,
        )
    except OSError as exc:
        raise CommandFailed(args, f"cannot run {args[0]}: {exc.strerror}") from None


def _finish(
    proc: subprocess.Popen[Any],
    args: list[str],
    timeout: float,
    *,
    input: str | None = None,
    tail: Callable[[str | None, str | None], str],
) -> tuple[Any, Any]:
    """Wait at most ``timeout`` seconds for ``proc`` (what it wrote to its pipes, if any).

    After ``timeout``, or when the wait is interrupted (Ctrl-C), the process group is killed
    (at once by the signal's handler when another thread waits: :func:`killed_on_interrupt`);
    a timeout is a :class:`CommandFailed` holding ``tail`` of the output.
    """
    deadline = time.monotonic() + timeout
    try:
        with killed_on_interrupt(proc.pid):
            while True:
                left = deadline - time.monotonic()
                try:
                    return proc.communicate(input, timeout=max(0.0, min(left, WAKE_SECONDS)))
                except subprocess.TimeoutExpired:
                    if left <= WAKE_SECONDS:
                        raise
                # Woken every WAKE_SECONDS (communicate() resumes without losing output; its
                # input went with the first call): an interrupt Python swallowed ends the wait
                # here, where the command would otherwise be waited for to its end.
                input = None
                raise_lost_interrupt()
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        raise CommandFailed(
            args,
            f"{_short(args)} did not finish within {timeout:g} s and was stopped",
            output=tail(stdout, stderr),
        ) from None
    except BaseException:
        _kill_group(proc)
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):  # as communicate() would have
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        raise


def _check_exit(args: list[str], returncode: int, check: bool, tail: str) -> None:
    if check and returncode != 0:
        raise CommandFailed(
            args,
            f"{_short(args)} failed with exit code {returncode}",
            returncode=returncode,
            output=tail,
        )


def _file_tail(path: Path, start: int) -> str:
    return read_tail(path, OUTPUT_TAIL, start).decode("utf-8", errors="replace")


def clean_env(
    extra: Mapping[str, str] | None = None, *, keep: Sequence[str] = ()
) -> dict[str, str]:
    """A minimal environment: PATH, HOME, locale and proxy settings, plus ``keep`` and ``extra``."""
    names = {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SSL_CERT_FILE", "SSL_CERT_DIR", *keep}
    env = {k: v for k, v in os.environ.items() if k in names or k.lower().endswith("_proxy")}
    env.update(extra or {})
    return env


def _kill_group(proc: subprocess.Popen[Any]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _short(args: Sequence[str]) -> str:
    text = shlex.join(args)
    return f"'{text}'" if len(text) <= 120 else f"'{text[:117]}...'"


def _tail(stdout: str | None, stderr: str | None) -> str:
    text = "\n".join(part for part in (stdout, stderr) if part)
    return text[-OUTPUT_TAIL:]


class LineTimeout(Exception):
    """No complete line arrived on a streaming command's stdout in time."""


class LineTooLong(Exception):
    """A streaming command wrote more than ``max_line`` bytes without a newline."""


class StreamingCommand:
    """A command whose stdout is read line by line, each read with its own deadline.

    For long-running children that report progress (the self-test worker): a hang is noticed per
    line, not only at the end, and everything reported before it is kept. stderr is drained
    while stdout is read (and while waiting), so the child never blocks on a full pipe; only its
    last :data:`STDERR_KEPT` bytes are kept (:meth:`stderr_tail`), so a flood fills neither memory
    nor disk. A line is at most ``max_line`` bytes (when given), for the same reason.
    The whole process group is killed by :meth:`kill` and when the ``with`` block ends, however
    it ends (the child may have exited and left children of its own behind).
    """

    def __init__(
        self,
        argv: Sequence[str | os.PathLike[str]],
        *,
        env: Mapping[str, str] | None = None,
        input: str | None = None,
        max_line: int | None = None,
    ) -> None:
        self.argv = [os.fspath(a) for a in argv]
        self.max_line = max_line
        _debug("stream: %s", shlex.join(self.argv))
        stdin = subprocess.PIPE if input is not None else subprocess.DEVNULL
        self._proc = _spawn(self.argv, stdin=stdin, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)  # fmt: skip
        self._buffer = b""
        self._eof = False
        self._stderr = bytearray()  # its last STDERR_KEPT bytes
        self._stderr_open = True
        if input is not None:
            self._send(input)

    def _send(self, text: str) -> None:
        assert self._proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):  # it exited early: its output says why
            self._proc.stdin.write(text.encode())
        with contextlib.suppress(BrokenPipeError):
            self._proc.stdin.close()

    def next_line(self, timeout: float) -> str | None:
        """The next line of stdout (without its newline), or None once stdout has closed.

        Raises :class:`LineTimeout` when no complete line arrives within ``timeout`` seconds, and
        :class:`LineTooLong` when the line exceeds ``max_line`` bytes.
        """
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            self._check_length(len(self._buffer))
            if self._eof:
                return self._take_rest()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise LineTimeout(f"no output within {timeout:g} s")
            self._read_some(remaining)
        line, _, self._buffer = self._buffer.partition(b"\n")
        self._check_length(len(line))
        return line.decode("utf-8", errors="replace")

    def _check_length(self, size: int) -> None:
        if self.max_line is not None and size > self.max_line:
            raise LineTooLong(f"a line longer than {self.max_line} bytes")

    def _read_some(self, timeout: float) -> None:
        assert self._proc.stdout is not None
        out, err = self._proc.stdout.fileno(), self._stderr_fd()
        ready, _, _ = select.select([out] + ([err] if err is not None else []), [], [], timeout)
        if err is not None and err in ready:
            self._read_stderr(err)
        if out in ready:
            chunk = os.read(out, 65536)
            self._buffer += chunk
            self._eof = not chunk

    def _stderr_fd(self) -> int | None:
        if not self._stderr_open or self._proc.stderr is None:
            return None
        return self._proc.stderr.fileno()

    def _read_stderr(self, fd: int) -> None:
        chunk = os.read(fd, 65536)
        self._stderr_open = bool(chunk)
        self._stderr += chunk
        del self._stderr[:-STDERR_KEPT]

    def _take_stderr(self, timeout: float) -> bool:
        """Take in what stderr has within ``timeout``; False when it had nothing (or is closed)."""
        fd = self._stderr_fd()
        if fd is None:
            return False
        ready, _, _ = select.select([fd], [], [], timeout)
        if ready:
            self._read_stderr(fd)
        return bool(ready)

    def _take_rest(self) -> str | None:
        if not self._buffer:
            return None
        rest, self._buffer = self._buffer, b""
        return rest.decode("utf-8", errors="replace")

    def wait(self, timeout: float) -> int:
        """The exit code; the process group is killed if it has not exited within ``timeout``.

        What the child writes on stderr meanwhile (a traceback, as it dies) is taken in.
        """
        deadline = time.monotonic() + timeout
        while self._proc.poll() is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                return self._proc.wait()
            step = min(remaining, 0.05)
            if self._stderr_fd() is None:
                time.sleep(step)
            else:
                self._take_stderr(step)
        for _ in range(64):  # what it wrote last; bounded, as its children may write on
            if not self._take_stderr(0):
                break
        return self._proc.returncode

    def kill(self) -> None:
        _kill_group(self._proc)

    def stderr_tail(self, limit: int = OUTPUT_TAIL) -> str:
        """The last ``limit`` bytes the child wrote on stderr (as far as read so far)."""
        return bytes(self._stderr[-limit:]).decode("utf-8", errors="replace")

    def __enter__(self) -> StreamingCommand:
        return self

    def __exit__(self, *exc: object) -> None:
        self.kill()  # also what the child left running if it has exited
        self._proc.wait()
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
