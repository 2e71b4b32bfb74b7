"""What the live environment holds, read from its ``*.dist-info`` directories without running it.

An upgrade builds a copy of the live environment; a package that someone installs into the live
one meanwhile would be lost at the swap. :func:`snapshot` records every distribution with a hash
of its ``RECORD`` (which lists the hash of every file it installed) at the start, and
:func:`changes` says, just before the swap, what differs since.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from packaging.utils import canonicalize_name

from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, MiB, read_bytes

MAX_RECORD = 64 * MiB


@frozen
class Installed:
    """One distribution: its version and the sha256 of its RECORD ('' when it has none)."""

    version: str
    record: str


Snapshot = dict[str, Installed]


def snapshot(venv: Path) -> Snapshot:
    """Every distribution installed in ``venv``, by canonical name."""
    found: Snapshot = {}
    for info in sorted(venv.glob("lib/python*/site-packages/*.dist-info")):
        name, _, version = info.name.removesuffix(".dist-info").partition("-")
        record = info / "RECORD"
        digest = hashlib.sha256(_record(record)).hexdigest() if record.is_file() else ""
        found[canonicalize_name(name)] = Installed(version, digest)
    return found


def _record(path: Path) -> bytes:
    """A RECORD file (torch's is a few hundred KiB); one that cannot be read stands for itself
    by its reason, so a change to it still shows."""
    try:
        return read_bytes(path, MAX_RECORD)
    except InputRejected as exc:
        return exc.problem.encode()


def changes(before: Snapshot, after: Snapshot) -> list[str]:
    """What was installed, removed or changed between two snapshots, in words."""
    said = []
    for name in sorted(before.keys() | after.keys()):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        if old is None and new is not None:
            said.append(f"{name} {new.version} was installed")
        elif new is None and old is not None:
            said.append(f"{name} {old.version} was removed")
        elif old is not None and new is not None and old.version != new.version:
            said.append(f"{name} changed from {old.version} to {new.version}")
        else:
            said.append(f"{name} {old.version if old else ''} was reinstalled or modified")
    return said
