"""Paths under a sysroot, resolved as the host itself would see them: as if chrooted there.

A sysroot is often another machine's root mounted in a container (``--sysroot /host``). Its
symbolic links were written for that machine: ``etc/os-release -> /usr/lib/os-release`` means the
*host's* ``/usr/lib/os-release``, never the one of the machine running neuron-env. So every
component is resolved here, one at a time with ``os.readlink``: an absolute link starts again at
the sysroot, and a ``..`` that would climb above it (``../../../etc/passwd``) is refused, as is a
chain of more than :data:`MAX_LINK_HOPS` links (a loop). A refusal is a :class:`Refused` naming
the link; a probe that meets one fails with that message, so it is reported, never followed.

Reads go through the bounded reader (:mod:`neuron_env.input_files`): only regular files, at most
so many bytes, never blocking on a FIFO or a device planted where a file should be.
"""

from __future__ import annotations

import os
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.facts import LINK_LOOP_FIX, NOT_A_FILE_FIX, REFUSED_LINK_FIX
from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, Unreadable, read_bytes, read_head

MAX_LINK_HOPS = 40  # Linux's own limit (MAXSYMLINKS) before ELOOP
SMALL_FILE = 1 << 20  # /proc and /sys values, os-release, hostname: a few bytes each


class Refused(BadInput):
    """A path under the sysroot that neuron-env will not follow or read; says which and why.

    A probe that meets one fails with this message (reported, the other probes go on); a command
    that reads the host outside the probes, such as ``install --system``, exits 2 with it.
    """

    def __init__(self, message: str, hint: str = REFUSED_LINK_FIX) -> None:
        super().__init__(message, hint=hint)


@frozen
class Sysroot:
    """The root of the host being probed (``/`` for this machine)."""

    root: Path

    @classmethod
    def at(cls, path: Path) -> Sysroot:
        """The sysroot at ``path``; a link to it (``/host -> /mnt/host``) is the user's choice."""
        return cls(Path(os.path.realpath(path)))

    def resolve(self, inner: str) -> Path:
        """The real path on this machine of the host's path ``inner`` (``/etc/os-release``).

        A missing component ends the resolution: the rest is joined as written, so the answer
        of a path that does not exist yet is where it would be created.
        """
        parts: list[str] = []
        pending = _components(inner)
        hops, via = 0, ""
        root = str(self.root).rstrip("/")  # paths as strings: pathlib's objects cost 3x the walk
        while pending:
            name = pending.pop()
            if name == "..":
                self._climb(parts, inner, via)
                continue
            target = _link_target("/".join((root, *parts, name)))
            if target is None:
                parts.append(name)
                continue
            hops += 1
            via = f"the link {_host_path([*parts, name])} -> {target}"
            if hops > MAX_LINK_HOPS:
                raise Refused(f"{self.where(inner)} is not read: more than {MAX_LINK_HOPS} links "
                              f"in a row (a loop?), the last {via}.", LINK_LOOP_FIX)  # fmt: skip
            if target.startswith("/"):
                parts = []  # the host's root is the sysroot
            pending.extend(_components(target))
        return self.root.joinpath(*parts)

    def _climb(self, parts: list[str], inner: str, via: str) -> None:
        if parts:
            parts.pop()
        elif self.root != Path("/"):  # on this machine's own root, '..' stays there, as always
            cause = via or f"the path {inner}"
            raise Refused(f"{self.where(inner)} is not read: {cause} leads out of the sysroot.")

    def where(self, inner: str) -> str:
        """``inner`` as a person locates it: the host's path, and the sysroot when not ``/``."""
        path = "/" + inner.lstrip("/")
        return path if self.root == Path("/") else f"{path} under the sysroot {self.root}"

    def file_bytes(self, inner: str, max_bytes: int = SMALL_FILE) -> bytes | None:
        """The contents of the host's file ``inner``; None when it is missing or unreadable."""
        path = self.resolve(inner)
        try:
            return read_bytes(path, max_bytes)
        except Unreadable:
            return None
        except InputRejected as exc:  # a FIFO, a device or a huge file where a file should be
            raise Refused(f"{self.where(inner)} is not read: it is {exc.problem}.",
                          NOT_A_FILE_FIX) from None  # fmt: skip

    def file_head(self, inner: str, max_bytes: int) -> bytes | None:
        """The first ``max_bytes`` of the host's file ``inner`` (a longer file is cut, never
        refused); None when it is missing or unreadable."""
        path = self.resolve(inner)
        try:
            return read_head(path, max_bytes)
        except Unreadable:
            return None
        except InputRejected as exc:  # a FIFO or a device where a file should be
            raise Refused(f"{self.where(inner)} is not read: it is {exc.problem}.",
                          NOT_A_FILE_FIX) from None  # fmt: skip

    def file_text(self, inner: str, max_bytes: int = SMALL_FILE) -> str | None:
        """ "``file_bytes`` as text, stripped; bytes that are not UTF-8 are replaced, not fatal."""
        data = self.file_bytes(inner, max_bytes)
        return None if data is None else data.decode("utf-8", errors="replace").strip()

    def listdir(self, inner: str) -> list[str]:
        """The names in the host's directory ``inner``; none when it is missing."""
        try:
            return sorted(entry.name for entry in self.resolve(inner).iterdir())
        except OSError:
            return []

    def exists(self, inner: str) -> bool:
        return os.path.lexists(self.resolve(inner))

    def is_file(self, inner: str) -> bool:
        return self.resolve(inner).is_file()


def _components(path: str) -> list[str]:
    """The components of ``path`` in reverse order, ready to be popped; ``.`` and ``//`` dropped."""
    return [part for part in reversed(path.split("/")) if part not in ("", ".")]


def _link_target(path: str) -> str | None:
    try:
        target = os.readlink(path)  # noqa: PTH115 - a str: a Path per component costs 3x
    except OSError:  # not a link (EINVAL), missing, or not reachable: a plain component
        return None
    return str(Path(target))  # written as pathlib would ("a//b/./c/" -> "a/b/c")


def _host_path(parts: list[str]) -> str:
    return "/" + "/".join(parts)
