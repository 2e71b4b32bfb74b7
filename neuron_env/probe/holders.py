"""Processes holding a Neuron device node open: ``/proc/<pid>/fd`` links, read as ``fuser`` does.

The runtime takes every NeuronCore a process is allowed, so a second job on the same cores fails
with none free while the devices look ready. The links are read with ``readlink`` and never
followed: their text is the path the process opened, as the host names it (``/dev/neuron0``).
Without root only this user's processes can be read; the others are counted, not guessed.
"""

from __future__ import annotations

import re

from neuron_env.facts import DeviceHolder
from neuron_env.probe.sysroot import Sysroot

NEURON_NODE = re.compile(r"^/dev/neuron\d+$")
# The kernel numbers the host's (initial) PID namespace PROC_PID_INIT_INO = 0xEFFFFFFC
# (include/linux/proc_ns.h): /proc/self/ns/pid reads "pid:[4026531836]" there and another
# number in a container's own namespace, where the driver (and so neuron-ls) still names
# processes by their host PIDs.
HOST_PID_NAMESPACE = "pid:[4026531836]"
PID_NAMESPACE = re.compile(r"^pid:\[\d+\]$")
COMMAND_MAX_BYTES = 4096  # a command line is shown shortened; more is never needed


def device_holders(
    root: Sysroot, proc: Sysroot | None = None
) -> tuple[tuple[DeviceHolder, ...], int]:
    """The processes under ``proc`` (the host's /proc by default) with one of ``root``'s
    /dev/neuron* open, and how many processes could not be inspected."""
    proc = proc or root
    nodes = _node_paths(root)
    holders: list[DeviceHolder] = []
    unreadable = 0
    for pid in _pids(proc):
        try:
            held = _held_nodes(proc, pid, nodes)
        except PermissionError:
            unreadable += 1
            continue
        if held:
            holders.append(DeviceHolder(pid, _command(proc, pid), held))
    return tuple(holders), unreadable


def in_host_pid_namespace(proc: Sysroot) -> bool | None:
    """Whether neuron-env runs in the host's PID namespace (False: a container's own, where a
    PID neuron-ls prints is not one this process can signal); None when /proc cannot tell."""
    try:
        link = str((proc.resolve("proc/self/ns") / "pid").readlink())
    except OSError:
        link = ""
    if PID_NAMESPACE.match(link):
        return link == HOST_PID_NAMESPACE
    status = proc.file_text("proc/self/status") or ""
    nspid = next(
        (line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), []
    )
    # NSpid lists this process's PID in each namespace from /proc's down: more than one means
    # it sits in a namespace below the one this /proc shows.
    # One entry cannot tell: a container that mounts its own /proc shows one too.
    return False if len(nspid) > 1 else None


def _node_paths(root: Sysroot) -> dict[str, str]:
    """Link text that names a Neuron node -> the host's name for it: ``/dev/neuronN`` itself, and
    the node's real path here (a sysroot's nodes are opened at their path on this machine)."""
    names = [name for name in root.listdir("dev") if NEURON_NODE.match(f"/dev/{name}")]
    paths = {f"/dev/{name}": f"/dev/{name}" for name in names}
    paths.update({str(root.resolve(f"dev/{name}")): f"/dev/{name}" for name in names})
    return paths


def _pids(proc: Sysroot) -> list[int]:
    return sorted(int(name) for name in proc.listdir("proc") if name.isascii() and name.isdigit())


def _held_nodes(proc: Sysroot, pid: int, nodes: dict[str, str]) -> tuple[str, ...]:
    """The nodes among ``nodes`` that process ``pid`` has open; gone processes hold nothing."""
    fd_dir = proc.resolve(f"proc/{pid}/fd")
    try:
        entries = list(fd_dir.iterdir())
    except PermissionError:
        raise
    except OSError:  # the process ended while we looked
        return ()
    held = set()
    for entry in entries:
        try:
            target = str(entry.readlink())  # the link's text, never followed
        except OSError:
            continue
        if target in nodes:
            held.add(nodes[target])
    return tuple(sorted(held, key=lambda p: int(p.removeprefix("/dev/neuron"))))


def _command(proc: Sysroot, pid: int) -> str:
    """The process's command line, its first 4 KiB (a longer one, such as a launcher's with
    every argument spelled out, ends in ``…``); its name when the line is empty or unreadable."""
    raw = proc.file_head(f"proc/{pid}/cmdline", COMMAND_MAX_BYTES + 1) or b""
    cut = len(raw) > COMMAND_MAX_BYTES
    raw = raw[:COMMAND_MAX_BYTES]
    line = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
    if line:
        return line + "…" if cut else line
    name = proc.file_head(f"proc/{pid}/comm", COMMAND_MAX_BYTES) or b""
    return name.decode("utf-8", errors="replace").strip() or "?"
