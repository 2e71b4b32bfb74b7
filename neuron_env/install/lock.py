"""Hash-pinned requirements (the file ``install --export`` writes), read back and enforced.

A requirement line may end in ``--hash=sha256:HEX`` options, as pip writes them (also on
continuation lines). Once one requirement carries a hash, every one must, pinned with ``==``
(pip's ``--require-hashes``): the file is then a lock. The install still resolves through the
plan's routes (a Neuron name only from the Neuron index); before anything is installed, every file
the resolution picked must be one the lock lists, by name, version and sha256. A file the lock
does not list, or one whose sha256 differs, refuses the install, and the target stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Protocol

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from neuron_env.errors import BadInput, OperationFailed
from neuron_env.frozen import frozen
from neuron_env.install.plan import InstallPlan
from neuron_env.install.wheelhouse import WheelFile
from neuron_env.invocation import command

_SHA256 = re.compile(r"[0-9a-f]{64}")


def export_again(torch: str, origin: str) -> str:
    """The hint for a malformed lock: the export that writes it again, to the file named in
    ``origin`` (``FILE:LINE``)."""
    file = origin.rpartition(":")[0] or origin
    return f"Write the file again with '{command('install', '--torch', torch, '--export', file)}'."


def split_hashes(line: str, where: str, torch: str) -> tuple[str, tuple[str, ...]]:
    """The requirement of ``line`` and the sha256 digests of its ``--hash`` options (``torch``:
    the PyTorch asked for, for the hint that writes the file again).

    pip's forms are accepted (``--hash=sha256:HEX`` and ``--hash sha256:HEX``); any other option
    after a requirement is bad input, like an option line.
    """
    head, *options = re.split(r"\s+(?=--)", line, maxsplit=1)
    words = options[0].split() if options else []
    digests: list[str] = []
    while words:
        word = words.pop(0)
        if word == "--hash" and words:
            word += "=" + words.pop(0)
        if not word.startswith("--hash="):
            raise BadInput(
                f"{where}: the option '{word}' after '{head}' is not supported; only "
                "--hash=sha256:... may follow a requirement.",
                hint="Keep one requirement a line; neuron-env picks the indexes itself.",
            )
        digests.append(_digest(word.removeprefix("--hash="), where, torch))
    return head.strip(), tuple(digests)


def _digest(value: str, where: str, torch: str) -> str:
    algorithm, _, digest = value.partition(":")
    if algorithm != "sha256" or not _SHA256.fullmatch(digest.lower()):
        raise BadInput(
            f"{where}: '--hash={value}' is not a sha256 hash (--hash=sha256: and 64 hex digits).",
            hint=export_again(torch, where),
        )
    return digest.lower()


class Hashed(Protocol):
    """A requirement as read (``UserRequirement``): its text, origin and hashes."""

    @property
    def text(self) -> str: ...
    @property
    def origin(self) -> str: ...
    @property
    def hashes(self) -> tuple[str, ...]: ...


def check_hash_mode(requirements: Sequence[Hashed], torch: str) -> None:
    """Once one requirement has a hash, every one needs one and an exact ``==`` version."""
    first = next((r for r in requirements if r.hashes), None)
    if first is None:
        return
    again = export_again(torch, first.origin)  # a hash comes only from a file
    for req in requirements:
        if not req.hashes:
            raise BadInput(
                f"{req.origin}: '{req.text}' has no --hash, but {first.origin} has one: once "
                "one requirement is pinned by its hash, every one must be (as with pip's "
                "--require-hashes), or a package could come unchecked.",
                hint=f"Add --hash=sha256:... to that line, or leave it out. {again}",
            )
        if locked_version(req.text) is None:
            raise BadInput(
                f"{req.origin}: '{req.text}' has a --hash but no exact version: a hash pins one "
                "file, so the requirement must be NAME==VERSION.",
                hint=again,
            )


def locked_version(text: str) -> str | None:
    """The exact version of ``NAME==VERSION`` (no wildcard), else None."""
    specs = list(Requirement(text).specifier)
    if len(specs) != 1 or specs[0].operator not in ("==", "===") or "*" in specs[0].version:
        return None
    return specs[0].version


@frozen
class ResolvedFile:
    """One file the resolution would install: its project, version, file name and sha256s."""

    name: str
    version: str
    file: str
    sha256: tuple[str, ...]


def check_locked(plan: InstallPlan, files: Iterable[ResolvedFile], *, source: str) -> None:
    """Refuse files the plan's lock does not list by name, version and sha256 (no lock: pass).

    ``source``: where the files come from, for the message ("the indexes", "wheelhouse DIR").
    """
    locked = {p.name: p for p in plan.packages if p.hashes}
    if not locked:
        return
    for found in files:
        name = str(canonicalize_name(found.name))
        package = locked.get(name)
        if package is None:
            raise LockMismatch(
                f"The resolution takes {name} {found.version} from {source}, and the lock does "
                f"not list {name}: nothing was installed.",
                plan,
            )
        if not _same_version(package.spec, found.version) or not found.sha256:
            raise LockMismatch(
                f"The lock pins {name}{package.spec}, but {source} gave {found.file}: nothing "
                "was installed.",
                plan,
            )
        if not set(found.sha256) <= set(package.hashes):
            raise LockMismatch(
                f"{name} {found.version}: the file {found.file} from {source} has sha256 "
                f"{found.sha256[0]}, not the one the lock pins ({', '.join(package.hashes)}), "
                "so it is not the file that was exported; nothing was installed.",
                plan,
            )


def wheelhouse_files(files: Iterable[WheelFile]) -> list[ResolvedFile]:
    """The files of a wheelhouse (its manifest, or one just filled), to check against a lock."""
    return [ResolvedFile(w.name, w.version, w.file, (w.sha256,)) for w in files]


def _same_version(spec: str, version: str) -> bool:
    try:
        return Version(spec.removeprefix("===").removeprefix("==")) == Version(version)
    except InvalidVersion:
        return False


class LockMismatch(OperationFailed):
    """The resolution differs from the lock (exit 1): another file, version or package."""

    def __init__(self, message: str, plan: InstallPlan) -> None:
        export = command(
            "install", "--torch", plan.torch, "--release", plan.release, "--export",
            plan.lock or "FILE",
        )  # fmt: skip
        instead = "" if plan.lock else ", with the lock's path in place of FILE"
        super().__init__(
            message,
            hint="The index serves other files than when the lock was written (or the lock was "
            "edited). Check the indexes; if the new files are trusted, export the lock again "
            f"with '{export}'{instead}.",
        )
