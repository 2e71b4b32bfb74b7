"""SIGINT and SIGTERM end every long command the same way: children ended, nothing left behind.

The real console script is signalled while it really waits: the local index holds pip's request
for torch's page (resolving) or sends a third of the torch wheel and stalls (downloading), and
``matrix verify`` waits on a socket that never answers. The test sees the request arrive, then
signals. Each run must exit 128 + the signal (130, 143) with one ``Interrupted`` line, leave no
child process running, no temporary folder, and a ``-d`` folder as it found it.
"""

from __future__ import annotations

import ctypes
import os
import select
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import cli_argv
from tests.support.indexes import PHASES, Indexes, start_indexes, wait_for_new_request
from tests.support.install_helpers import isolated_environment, write_install_matrix
from tests.support.processes import (
    children_of,
    group_members,
    interrupted_lines,
    processes_with,
    running,
)

pytestmark = pytest.mark.integration

SIGNALS = [signal.SIGINT, signal.SIGTERM]


@dataclass(frozen=True)
class Run:
    returncode: int
    stderr: str
    children: list[int]  # neuron-env's children while it waited (pip)


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_install_matrix(tmp_path_factory.mktemp("matrix"))


@pytest.fixture(scope="module", params=list(PHASES))
def phase(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Indexes, str]]:
    fault, fragment = PHASES[request.param]
    indexes = start_indexes(tmp_path_factory.mktemp(request.param), fault)
    yield indexes, fragment
    indexes.stop()


def signalled_download(
    tmp_path: Path, matrix: Path, phase: tuple[Indexes, str], dest: Path, sig: int
) -> Run:
    indexes, fragment = phase
    env = isolated_environment(tmp_path, matrix)
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    argv = cli_argv("download", "--torch", "2.14", "-d", str(dest), *indexes.args())
    seen = len(indexes.requests("pytorch"))  # the module's earlier runs asked too
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)  # fmt: skip
    try:
        wait_for_new_request(indexes, fragment, seen, proc)
        children = children_of(proc.pid)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return Run(proc.returncode, err, children)


def assert_interrupted_cleanly(run: Run, sig: int, tmp_path: Path) -> None:
    assert run.returncode == 128 + sig, run.stderr
    assert len(interrupted_lines(run.stderr)) == 1, run.stderr
    assert "Traceback" not in run.stderr
    assert run.children, "pip was not running when the signal came"
    assert [pid for pid in run.children if running(pid)] == []
    assert [group_members(pid) for pid in run.children] == [[]] * len(run.children)
    assert sorted(p.name for p in (tmp_path / "tmp").iterdir()) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_during_download_removes_the_new_folder_and_everything_pip_started(
    tmp_path: Path, matrix: Path, phase: tuple[Indexes, str], sig: signal.Signals
) -> None:
    dest = tmp_path / "new" / "wheels"
    run = signalled_download(tmp_path, matrix, phase, dest, sig)
    assert_interrupted_cleanly(run, sig, tmp_path)
    assert f"Interrupted. Nothing was kept: {dest} was removed." in " ".join(run.stderr.split())
    assert not (tmp_path / "new").exists()  # neither -d nor the parent it created


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_during_download_leaves_an_existing_folder_empty_as_it_was(
    tmp_path: Path, matrix: Path, phase: tuple[Indexes, str], sig: signal.Signals
) -> None:
    dest = tmp_path / "wheels"
    dest.mkdir(mode=0o750)
    before = dest.stat()
    run = signalled_download(tmp_path, matrix, phase, dest, sig)
    assert_interrupted_cleanly(run, sig, tmp_path)
    assert "is empty, as it was" in " ".join(run.stderr.split())
    assert list(dest.iterdir()) == []
    assert (dest.stat().st_ino, dest.stat().st_mode) == (before.st_ino, before.st_mode)


def _verify_against_a_silent_index(
    tmp_path: Path, deliver: Callable[[subprocess.Popen[str]], None]
) -> tuple[int, str, Path]:
    """``matrix verify --write`` against an index that takes the request and never answers;
    ``deliver`` signals the process once the request is out. The process is never left behind."""
    overlay = tmp_path / "overlay"
    overlay.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.settimeout(60)
        hanging = f"http://127.0.0.1:{sock.getsockname()[1]}/simple"
        proc = subprocess.Popen(
            cli_argv("matrix", "verify", "--release", "2.34.0", "--timeout", "120",
                     "--neuron-index", hanging, "--pytorch-index", hanging,
                     "--write", str(overlay)),
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            conn, _ = sock.accept()  # the request is out: neuron-env now waits for an answer
            with conn:
                deliver(proc)
                _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    return proc.returncode, err, overlay


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_matrix_verify_waits_writes_nothing_and_says_so_once(
    tmp_path: Path, sig: signal.Signals
) -> None:
    code, err, overlay = _verify_against_a_silent_index(tmp_path, lambda p: p.send_signal(sig))
    assert code == 128 + sig, err
    assert interrupted_lines(err) == ["error: Interrupted. Nothing was written."]
    assert list(overlay.iterdir()) == []


def _tgkill(pid: int, tid: int, sig: int) -> None:
    """Signal one thread of another process (the kernel's tgkill; Python has none)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.syscall(234, pid, tid, sig) != 0:  # SYS_tgkill on x86_64
        raise OSError(ctypes.get_errno(), "tgkill failed")


def test_a_signal_the_kernel_hands_to_a_reading_thread_still_ends_verify_at_once(
    tmp_path: Path,
) -> None:
    """The kernel may give a process's SIGTERM to any of its threads. Given to a thread that
    reads an index, it must still stop the run at once, not when the read times out (120 s)."""

    def to_a_worker_thread(proc: subprocess.Popen[str]) -> None:
        tids = [int(t) for t in os.listdir(f"/proc/{proc.pid}/task") if int(t) != proc.pid]
        _tgkill(proc.pid, max(tids), signal.SIGTERM)

    started = time.monotonic()
    code, err, overlay = _verify_against_a_silent_index(tmp_path, to_a_worker_thread)
    assert code == 143, err
    assert time.monotonic() - started < 30, "the run waited for the read's own timeout"
    assert interrupted_lines(err) == ["error: Interrupted. Nothing was written."]
    assert list(overlay.iterdir()) == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_doctor_probes_a_hung_interpreter_ends_it_at_once(
    tmp_path: Path, sig: signal.Signals
) -> None:
    """doctor probes the target interpreter from a thread of its own; the signal reaches the main
    thread, which once waited for that thread, so for the probe's own timeout, before exiting."""
    started = tmp_path / "probe-started"  # a FIFO: the probe says it runs, the test wakes
    os.mkfifo(started)
    hung = tmp_path / "python"
    hung.write_text(f"#!/bin/sh\necho started > {started}\nexec sleep 300\n")
    hung.chmod(0o755)
    marker = f"NEURON_ENV_TEST_HUNG_PROBE={tmp_path.name}"
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    reader = os.open(started, os.O_RDONLY | os.O_NONBLOCK)
    proc = subprocess.Popen(
        cli_argv("doctor", "--python", str(hung), "--probe-timeout", "120"),
        env={**env, marker.split("=")[0]: marker.split("=")[1]},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        readable, _, _ = select.select([reader], [], [], 60)
        assert readable, "the target probe never started"
        sent = time.monotonic()
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
        took = time.monotonic() - sent
    finally:
        os.close(reader)
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + sig, err
    assert took < 10, f"exited {took:.1f} s after the signal: it waited for the probe"
    assert len(interrupted_lines(err)) == 1, err
    assert processes_with(marker) == []  # the hung probe did not outlive the run
