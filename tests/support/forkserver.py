"""Start the ``neuron-env`` console script's ``main()`` in a fork of a process that has already
imported neuron-env, typer and rich, instead of a new interpreter that imports them again.

The suite runs the console script about 1,300 times; each start costs an interpreter and the
command's imports (about 0.1 to 0.2 s of CPU), about a sixth of the suite's CPU. A fork of a
warm server gives the same thing a new process would: its own pid, argv, environment, working
directory, umask and standard streams (the caller's pipes, passed over a Unix socket), signals at
their defaults, ``sys.path[0]`` the console script's folder, and the interpreter's own shutdown
(atexit, flushing, the exit code, death by a signal). :func:`tests.support.cli.cli_runner` uses
it only where nothing can tell the difference: a run with a ``prefix`` (e.g. one that drops root)
or a ``preexec_fn``, or whose environment changes a variable the interpreter reads at start
(``PYTHON*``, the locale), starts the console script itself. ``NEURON_ENV_TEST_FORKSERVER=0``
turns the server off for a whole run.

Protocol, per run: the client connects, sends the three descriptors (stdin, stdout, stderr) with
a 4-byte length, then the JSON job; the server forks a watcher, which forks the run, sends its pid
(4 bytes), waits for it and sends its wait status and CPU seconds (``!id``).

Run as ``python tests/support/forkserver.py SOCKET``; it prints ``ready`` when it listens and
ends when its standard input closes (the test process that started it ended).
"""

from __future__ import annotations

import json
import os
import selectors
import signal
import socket
import struct
import sys
from typing import Any

# Read from the interpreter at start: a run whose environment differs here starts a new one.
START_VARIABLES = ("LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "PYTHON")


def _preload() -> None:
    """Everything a command imports at its top, so each run's import is a dictionary lookup."""
    from importlib import import_module

    import rich.console  # noqa: F401
    import typer  # noqa: F401

    from neuron_env.cli import COMMANDS

    for command in COMMANDS.values():
        import_module(command.module)


def read_exactly(conn: socket.socket, size: int) -> bytes:
    """``size`` bytes from ``conn`` (the server's and the client's reads alike)."""
    data = b""
    while len(data) < size:
        chunk = conn.recv(size - len(data))
        if not chunk:
            raise EOFError("the other end closed the connection")
        data += chunk
    return data


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    header, fds, _flags, _addr = socket.recv_fds(conn, 4, 3)
    (size,) = struct.unpack("!I", header)
    return json.loads(read_exactly(conn, size)), fds


def serve(path: str) -> dict[str, Any]:
    """Accept jobs until stdin closes; returns only in a forked run, with its job."""
    _preload()
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the watchers are reaped by the kernel
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ)
    selector.register(sys.stdin, selectors.EVENT_READ)
    print("ready", flush=True)
    while True:
        for key, _ in selector.select():
            if key.fileobj is sys.stdin:
                os._exit(0)  # the test process ended
            conn, _ = listener.accept()
            try:
                job, fds = _receive(conn)
            except (OSError, EOFError, ValueError):
                conn.close()
                continue
            if os.fork() == 0:
                selector.close()
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                run = os.fork()
                if run == 0:
                    conn.close()
                    _become(job, fds)
                    return job
                _watch(conn, run, fds)
            conn.close()
            for fd in fds:
                os.close(fd)


def _watch(conn: socket.socket, run: int, fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(struct.pack("!i", run))
        _pid, status, usage = os.wait4(run, 0)
        conn.sendall(struct.pack("!id", status, usage.ru_utime + usage.ru_stime))
    finally:
        os._exit(0)


def _become(job: dict[str, Any], fds: list[int]) -> None:
    """Turn this fork into the run: streams, directory, environment, umask, signals, argv."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(job["cwd"])
    os.environ.clear()
    os.environ.update(job["env"])
    os.umask(job["umask"])
    for number in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.argv = list(job["argv"])
    sys.path[0] = os.path.dirname(sys.argv[0])  # as for the console script


if __name__ == "__main__":
    sys.path[0] = os.path.dirname(sys.executable)  # not tests/support: nothing there shadows
    serve(sys.argv[1])
    from neuron_env.cli import main

    main()  # as the console script's sys.exit(main()): main exits, then the interpreter's shutdown
