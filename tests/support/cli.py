"""Running the real ``neuron-env`` console script from the tests, and where the tests' data lives.

The one home of these helpers (tests/conftest.py only turns them into fixtures)."""

from __future__ import annotations

import atexit
import json
import locale
import os
import selectors
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"
# The console script installed next to the interpreter running the tests.
NEURON_ENV = Path(sys.executable).with_name("neuron-env")


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: str
    stderr: str


CliRunner = Callable[..., Result]


def cli_argv(*args: str) -> list[str]:
    """The console script's command line, for the few tests that start it themselves (on a
    terminal, to signal it while it runs, under ``unshare``); every other test uses
    :func:`cli_runner`."""
    return [str(NEURON_ENV), *args]


def machine_env(*dropped: str) -> dict[str, str]:
    """This machine's environment without neuron-env's own variables (and those starting with
    ``dropped``), with plain output 160 columns wide."""
    prefixes = ("NEURON_ENV_", *dropped)
    env = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    return {**env, "NO_COLOR": "1", "COLUMNS": "160"}


def cli_runner(
    cwd: Path | None = None,
    *,
    base_env: Mapping[str, str] | None = None,
    timeout: float = 60,
    prefix: Sequence[str] = (),
) -> CliRunner:
    """The one way the tests run the console script to its end: from ``cwd``, with ``base_env``
    (default :func:`machine_env`), behind ``prefix`` (e.g. a command that drops capabilities).

    A run is a fork of the :data:`FORKSERVER` (neuron-env already imported; what the run sees is
    the same, ``tests/integration/test_forkserver.py`` checks it) unless it has a ``prefix`` or a
    ``preexec_fn``, or its environment changes what the interpreter reads at start: then the
    console script itself is started."""
    base = dict(machine_env() if base_env is None else base_env)

    def run(
        *args: str,
        env: Mapping[str, str | None] | None = None,
        timeout: float = timeout,
        preexec_fn: Callable[[], None] | None = None,
    ) -> Result:
        """``env`` is added to the base environment; a variable set to None is removed."""
        full_env: dict[str, str | None] = {**base, **(env or {})}
        run_env = {k: v for k, v in full_env.items() if v is not None}
        argv = cli_argv(*args)
        server = None if prefix or preexec_fn else FORKSERVER.for_env(run_env)
        if server is not None:
            return server.run(argv, run_env, cwd, timeout)
        proc = subprocess.run(
            [*prefix, *argv],
            capture_output=True,
            text=True,
            env=run_env,
            cwd=cwd,
            timeout=timeout,
            preexec_fn=preexec_fn,  # only to drop capabilities, before exec
            check=False,
        )
        return Result(proc.returncode, proc.stdout, proc.stderr)

    return run


def _decoded(data: bytes) -> str:
    """As ``subprocess.run(text=True)`` decodes: the locale's encoding, universal newlines."""
    text = data.decode(locale.getpreferredencoding(False))
    return text.replace("\r\n", "\n").replace("\r", "\n")


class ForkServer:
    """The client of :mod:`tests.support.forkserver`, one server per test process, started on
    first use (``NEURON_ENV_TEST_FORKSERVER=0``: never)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[str] | None = None
        self._path = ""
        self._start_env: dict[str, str] = {}
        self.cpu = 0.0
        """CPU seconds of the runs so far (they are not this process's children)."""

    def for_env(self, env: Mapping[str, str]) -> ForkServer | None:
        """This server, where a run with ``env`` cannot tell a fork from a new interpreter."""
        if os.environ.get("NEURON_ENV_TEST_FORKSERVER", "1") == "0":
            return None
        from tests.support.forkserver import START_VARIABLES

        def read_at_start(variables: Mapping[str, str]) -> dict[str, str]:
            return {k: v for k, v in variables.items() if k.startswith(START_VARIABLES)}

        with self._lock:
            if self._proc is None:
                self._start()
        if read_at_start(env) != read_at_start(self._start_env):
            return None
        return self

    def _start(self) -> None:
        folder = tempfile.mkdtemp(prefix="neuron-env-forkserver-")
        self._path = os.path.join(folder, "socket")
        self._start_env = dict(os.environ)
        script = Path(__file__).with_name("forkserver.py")
        self._proc = subprocess.Popen(
            [sys.executable, str(script), self._path],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=folder,
        )  # fmt: skip
        assert self._proc.stdout is not None
        ready = self._proc.stdout.readline()
        assert ready == "ready\n", f"the fork server did not start: {ready!r}"
        atexit.register(self._stop, folder)

    def _stop(self, folder: str) -> None:
        if self._proc is not None and self._proc.stdin is not None:
            self._proc.stdin.close()  # the server ends at EOF
            self._proc.wait(10)
        for name in os.listdir(folder):
            os.unlink(os.path.join(folder, name))
        os.rmdir(folder)

    def run(self, argv: list[str], env: dict[str, str], cwd: Path | None, timeout: float) -> Result:
        from tests.support.forkserver import read_exactly

        job = {"argv": argv, "env": env, "cwd": str(cwd or os.getcwd())}
        umask = os.umask(0o22)
        os.umask(umask)
        body = json.dumps({**job, "umask": umask}).encode()
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        stdin = os.open(os.devnull, os.O_RDONLY)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
            conn.connect(self._path)
            try:
                socket.send_fds(conn, [struct.pack("!I", len(body))], [stdin, out_w, err_w])
                conn.sendall(body)
            finally:
                for fd in (stdin, out_w, err_w):
                    os.close(fd)
            (pid,) = struct.unpack("!i", read_exactly(conn, 4))
            out, err = _read_until_closed(out_r, err_r, deadline=time.monotonic() + timeout)
            if out is None or err is None:
                os.kill(pid, 9)
                raise subprocess.TimeoutExpired(argv, timeout)
            status, cpu = struct.unpack("!id", read_exactly(conn, struct.calcsize("!id")))
        self.cpu += cpu
        return Result(os.waitstatus_to_exitcode(status), _decoded(out), _decoded(err))


def _read_until_closed(*fds: int, deadline: float) -> tuple[bytes | None, ...]:
    """Everything written to each pipe until every writer closed it, or Nones at ``deadline``."""
    chunks: dict[int, list[bytes]] = {fd: [] for fd in fds}
    with selectors.DefaultSelector() as selector:
        for fd in fds:
            selector.register(fd, selectors.EVENT_READ)
        try:
            while selector.get_map():
                left = deadline - time.monotonic()
                if left <= 0:
                    return tuple(None for _ in fds)
                for key, _ in selector.select(left):
                    data = os.read(key.fd, 1 << 16)
                    if data:
                        chunks[key.fd].append(data)
                    else:
                        selector.unregister(key.fd)
        finally:
            for fd in fds:
                os.close(fd)
    return tuple(b"".join(chunks[fd]) for fd in fds)


FORKSERVER = ForkServer()


def commands(command: Any, path: str) -> list[tuple[str, Any]]:
    """``command`` (a click command) and every subcommand below it, each with its path
    (``"fleet collect"``)."""
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += commands(sub, f"{path} {name}")
    return found
