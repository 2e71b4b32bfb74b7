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


def _node_paths(root: Sysroot) -> dict[str, str]:
    """Link text that names a Neuron node -> the host's name for it: ``/dev/neuronN`` itself, and
    the node's real path here (a sysroot's nodes are opened at their path on this machine)."""
    names = [name for name in root.listdir("dev") if NEURON_NODE.match(f"/dev/{name}")]
    paths = {f"/dev/{name}": f"/dev/{name}" for name in names}
    paths.update({str(root.resolve(f"dev/{name}")): f"/dev/{name}" for name in names})
    return paths


def _pids(proc: Sysroot) -> list[int]:
    return sorted(int(name) for name in proc.listdir("proc") if name.isdigit())


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
    """The process's command line (its name when the line is empty or unreadable)."""
    raw = proc.file_bytes(f"proc/{pid}/cmdline", COMMAND_MAX_BYTES) or b""
    line = raw.rstrip(b"\0").replace(b"\0", b" ").decode("utf-8", errors="replace").strip()
    return line or proc.file_text(f"proc/{pid}/comm", COMMAND_MAX_BYTES) or "?"
