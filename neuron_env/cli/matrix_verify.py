"""``neuron-env matrix verify``: the adapter between the CLI and :mod:`neuron_env.indexcheck`."""

from __future__ import annotations

import os
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from neuron_env.cli._common import print_json
from neuron_env.errors import BadInput
from neuron_env.indexcheck.simple import index_access
from neuron_env.indexcheck.verify import IndexResult, Verification, indexes_to_read, verify
from neuron_env.matrix import Matrix

MARKS = {
    "confirmed": ("✓", "green"),
    "contradicted": ("✗", "red"),
    "unknown": ("?", "yellow"),
}


@dataclass(frozen=True)
class VerifyOptions:
    release: str | None
    neuron_index: str | None
    pytorch_index: str | None
    json: bool
    write: Path | None
    timeout: float


def run(matrix: Matrix, options: VerifyOptions) -> int:
    """Read the indexes, report, write the overlay; the exit code (0 or 1)."""
    release = matrix.get(options.release)
    if options.write is not None:
        check_write_dir(options.write)
    overrides = {"neuron": options.neuron_index, "pytorch": options.pytorch_index}
    for flag, url in overrides.items():
        if url is not None:
            _check_index_url(f"--{flag}-index", url)
    default = default_index()
    if default is not None:
        _check_index_url(f"pip's index-url ({default[1]})", default[0])
    plan = indexes_to_read(release, overrides, default)
    result = verify(release, matrix, plan, timeout=options.timeout, progress=print_progress)
    overlay = None
    if options.write is not None and not result.unreadable:
        from neuron_env.indexcheck.overlay import write_overlay

        overlay = write_overlay(release, result, options.write)
    if options.json:
        print_json("matrix-verify", payload(result, overlay))
    else:
        from neuron_env.cli._common import console

        print_verification(console(), result, overlay)
    return result.exit_code


def default_index() -> tuple[str, str] | None:
    """pip's ``index-url`` and where it was set, when it is an http(s) index.

    The default index is read only when configured: neuron-env does not name it itself.
    """
    from neuron_env.indexcheck.pipconf import configured_index_url

    configured = configured_index_url()
    if configured is None or not configured[0].startswith(("http://", "https://")):
        return None  # not set, or a file:// index: the placeholders are not checked
    return configured


def payload(result: Verification, overlay: Path | None) -> dict[str, object]:
    status = (
        "unreadable"
        if result.unreadable
        else ("contradicted" if result.counts["contradicted"] else "confirmed")
    )
    return {
        "release": result.release,
        "checked_on": result.checked_on,
        "status": status,
        "exit_code": result.exit_code,
        "counts": result.counts,
        "indexes": result.indexes,
        "facts": result.facts,
        "overlay": str(overlay) if overlay is not None else None,
    }


def _check_index_url(flag: str, url: str) -> None:
    try:
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


def print_progress(result: IndexResult) -> None:
    """One short line on stderr per index read."""
    if result.readable:
        pages = ", ".join(result.projects)
        line = f"read the {result.name} index {result.url} ({pages}) in {result.seconds:.1f} s"
    else:
        line = f"could not read the {result.name} index {result.url}: {result.reason}"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def print_verification(out: Console, result: Verification, overlay: Path | None) -> None:
    out.print(f"[bold]Neuron {result.release}[/] against its indexes · {result.checked_on}")
    for ix in result.indexes:
        how = "/".join(f.upper() for f in ix.formats) or "-"
        state = how if ix.readable else f"[red]not read[/]: {escape(ix.reason or '')}"
        out.print(f"  {ix.name:<12} {escape(ix.url)} ({ix.origin}) · {state}")
    out.print()
    for fact in result.facts:
        mark, style = MARKS[fact.status]
        out.print(Text.assemble((mark, style), " ", fact.subject))
        where = f"{fact.index} index" if fact.index else "index"
        shows = textwrap.fill(
            f"{where}: {fact.index_shows}", width=max(out.width, 40), initial_indent="    ",
            subsequent_indent="    ", break_long_words=False, break_on_hyphens=False,
        )  # fmt: skip
        out.print(Text(shows, style="dim" if mark == "✓" else ""), soft_wrap=True)
    counts = result.counts
    out.print(
        f"\n{counts['confirmed']} confirmed, {counts['contradicted']} contradicted, "
        f"{counts['unknown']} unknown."
    )
    if not any(ix.name == "default" for ix in result.indexes):
        out.print(
            "Placeholders on the default index: not checked (set pip's index-url or "
            "PIP_INDEX_URL to check them)."
        )
    for ix in result.unreadable:
        out.print(
            f"[red]✗[/] The {ix.name} index could not be read: "
            f"{escape(ix.failed_url or ix.url)}: {escape(ix.reason or '')}"
        )
    if overlay is not None:
        folder = escape(str(overlay.parent))
        out.print(
            f"Overlay written: {escape(str(overlay))}\n"
            f"Use it with --matrix-dir {folder} or NEURON_ENV_MATRIX_DIR={folder}."
        )
