"""``matrix verify``'s views: progress lines, the text report and the JSON payload."""

from __future__ import annotations

import io
import sys
import textwrap
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.text import Text

from neuron_env.matrix.commands.indexcheck.facts import Fact
from neuron_env.matrix.commands.indexcheck.sources import UNSOURCED
from neuron_env.matrix.commands.indexcheck.verify import IndexResult, Verification
from neuron_env.matrix.commands.verify import VerifyResult
from neuron_env.output.console import new_console
from neuron_env.output.emit import Format, Outcome, Output, document, dumps
from neuron_env.output.formats import DocumentFormat
from neuron_env.wording import plural

MARKS = {
    "confirmed": ("✓", "green"),
    "contradicted": ("✗", "red"),
    "unknown": ("?", "yellow"),
}


def payload(result: Verification, overlay: Path | None) -> dict[str, object]:
    """The ``matrix-verify`` JSON payload."""
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


def print_progress(result: IndexResult) -> None:
    """One short line on stderr per index read."""
    if result.readable:
        pages = ", ".join(result.projects)
        line = f"read the {result.name} index {result.url} ({pages}) in {result.seconds:.1f} s"
    else:
        line = f"could not read the {result.name} index {result.url}: {result.reason}"
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


def print_verification(
    out: Console, result: Verification, overlay: Path | None, write: Path | None = None
) -> None:
    """The verification as text: the indexes read, each fact with what the index shows, the
    counts, what could not be read and the overlay written."""
    out.print(f"[bold]Neuron {result.release}[/] against its indexes · {result.checked_on}")
    for ix in result.indexes:
        how = "/".join(f.upper() for f in ix.formats) or "-"
        state = how if ix.readable else "[red]not read[/] (below)"
        out.print(f"  {ix.name:<12} {escape(ix.url)} ({ix.origin}) · {state}")
    out.print()
    for fact in result.facts:
        mark, style = MARKS[fact.status]
        out.print(Text.assemble((mark, style), " ", fact.subject))
        if _only_unread(fact, result):
            continue  # said once below, with a count, rather than under every fact
        where = f"{fact.index} index" if fact.index else "index"
        where = "matrix file" if fact.index_shows == UNSOURCED else where
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
        unknown = plural(sum(1 for f in result.facts if _unread(ix.name) in f.index_shows), "fact")
        out.print(
            f"[red]✗[/] The {ix.name} index could not be read ({unknown} unknown): "
            f"{escape(ix.failed_url or ix.url)}: {escape(ix.reason or '')}"
        )
    if overlay is None and write is not None:
        out.print(
            f"[red]✗[/] Overlay not written to {escape(str(write))}: an overlay is written only "
            "when every index was read. Run again once they answer."
        )
    if overlay is not None:
        folder = escape(str(overlay.parent))
        out.print(
            f"Overlay written: {escape(str(overlay))}\n"
            f"Use it with --matrix-dir {folder} or NEURON_ENV_MATRIX_DIR={folder}."
        )


def _unread(index: str) -> str:
    """How a fact says its index could not be read (``indexcheck.facts``)."""
    return f"the {index} index could not be read"


def _only_unread(fact: Fact, result: Verification) -> bool:
    """True when all the fact's line would say is that its indexes could not be read."""
    said = fact.index_shows
    for ix in result.unreadable:
        said = said.replace(_unread(ix.name), "")
    return fact.status == "unknown" and not said.strip("; ")


def outcome(result: VerifyResult) -> Outcome:
    """confirmed (exit 0), contradicted or unreadable (exit 1): the payload's own status."""
    verification = result.verification
    return Outcome(str(payload(verification, None)["status"]), verification.exit_code)


def _json(result: VerifyResult) -> str:
    data = payload(result.verification, result.overlay)
    return dumps(document("matrix-verify", data, outcome(result)))


def _print(out: Console, outcome: VerifyResult) -> None:
    print_verification(out, outcome.verification, outcome.overlay, outcome.write)


def _text(outcome: VerifyResult) -> str:
    buffer = io.StringIO()
    _print(new_console(file=buffer), outcome)
    return buffer.getvalue()


VERIFY: Output[VerifyResult, DocumentFormat] = Output(
    VerifyResult,
    DocumentFormat,
    {DocumentFormat.text: Format(_text, terminal=_print), DocumentFormat.json: Format(_json)},
    outcome,
)
