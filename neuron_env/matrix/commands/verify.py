"""``matrix verify``: a release file checked against the package indexes themselves."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen

if TYPE_CHECKING:
    from neuron_env.matrix.commands.indexcheck.verify import IndexResult, Verification


@frozen(kw_only=True)
class VerifyRequest:
    """Which release to verify, which mirrors to read, and where an overlay file goes."""

    matrix_dirs: Sequence[Path] = ()
    release: str | None = None
    neuron_index: str | None = None
    pytorch_index: str | None = None
    write: Path | None = None
    timeout: float = 15.0
    progress: Callable[[IndexResult], None] = field(default=lambda _: None)


@frozen
class VerifyResult:
    verification: Verification
    overlay: Path | None  # the overlay release file written, if one was
    write: Path | None = None  # where --write asked for it (not written: an index was not read)


def verify_release(request: VerifyRequest) -> VerifyResult:
    """Read the indexes and judge the release's facts; write the overlay when asked and every
    index was read. An unusable ``--write`` directory or index URL is bad input, said before any
    index is read."""
    from neuron_env.matrix import load_matrix
    from neuron_env.matrix.commands.indexcheck.verify import indexes_to_read, verify

    matrix = load_matrix(list(request.matrix_dirs))
    release = matrix.get(request.release)
    if request.write is not None:
        check_write_dir(request.write)
    overrides = {"neuron": request.neuron_index, "pytorch": request.pytorch_index}
    for flag, url in overrides.items():
        if url is not None:
            _check_index_url(f"--{flag}-index", url)
    default = default_index()
    if default is not None:
        _check_index_url(f"pip's index-url ({default[1]})", default[0])
    plan = indexes_to_read(release, overrides, default)
    result = verify(release, matrix, plan, timeout=request.timeout, progress=request.progress)
    overlay = None
    if request.write is not None and not result.unreadable:
        from neuron_env.matrix.commands.indexcheck.overlay import write_overlay

        overlay = write_overlay(release, result, request.write)
    return VerifyResult(result, overlay, request.write)


def default_index() -> tuple[str, str] | None:
    """pip's ``index-url`` and where it was set, when it is an http(s) index.

    The default index is read only when configured: neuron-env does not name it itself.
    """
    from neuron_env.matrix.commands.indexcheck.pipconf import configured_index_url

    configured = configured_index_url()
    if configured is None or not configured[0].startswith(("http://", "https://")):
        return None  # not set, or a file:// index: the placeholders are not checked
    return configured


def _check_index_url(flag: str, url: str) -> None:
    try:
        from neuron_env.matrix.commands.indexcheck.simple import index_access

        index_access(url)
    except ValueError as exc:
        raise BadInput(
            f"{flag}: {exc}.",
            hint=f"Give the index's simple URL, e.g. {flag} https://mirror.example/simple",
        ) from None


def check_write_dir(directory: Path) -> None:
    """Refuse an unusable ``--write`` directory before any index is read (exit 2)."""
    if directory.exists():
        if not directory.is_dir():
            raise BadInput(f"--write {directory}: not a directory.")
        if not os.access(directory, os.W_OK | os.X_OK):
            raise BadInput(f"--write {directory}: the directory is not writable.")
        return
    parent = next((p for p in directory.absolute().parents if p.exists()), None)
    if parent is None or not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise BadInput(f"--write {directory}: cannot create it ({parent} is not writable).")
