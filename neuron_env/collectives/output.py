"""``neuron-env collectives`` as nccl-tests' table, the JSON envelope, JUnit and an HTML page
(:mod:`neuron_env.collectives.html_report`); layout only."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import groupby
from typing import Any

from neuron_env.collectives.html_report import render
from neuron_env.collectives.models import CollectivesResult, NccomOp, Progress, Row
from neuron_env.escape import terminal
from neuron_env.output.emit import Format, Outcome, Output, document, dumps, passed
from neuron_env.output.formats import CollectivesFormat
from neuron_env.output.junit_xml import Case, Suite, write_junit
from neuron_env.wording import size_label

SCHEMA = "collectives"


def outcome(result: CollectivesResult) -> Outcome:
    return passed(result.ok)


# --- text ---------------------------------------------------------------------------------------

HEADER = (
    f"#{'size':>12} {'count':>12} {'type':>9} {'redop':>6} {'time':>10} {'algbw':>8} "
    f"{'busbw':>8} {'#wrong':>7}"
)
UNITS = f"#{'(B)':>12} {'(elements)':>12} {'':>9} {'':>6} {'(us)':>10} {'(GB/s)':>8} {'(GB/s)':>8}"
# --compare-nccom's columns: nccom-test's busbw (converted to GB/s) and ours over it.
NCCOM_HEADER = f" {'nccom':>8} {'ours/':>7}"
NCCOM_UNITS = f" {'':>7} {'(GB/s)':>8} {'nccom':>7}"


def _line(row: Row, result: CollectivesResult) -> str:
    line = (
        f" {row.size:>12} {row.count:>12} {row.dtype:>9} {row.redop:>6} "
        f"{row.time_s * 1e6:>10.1f} {row.algbw:>8.2f} {row.busbw:>8.2f} {row.wrong:>7}"
    )
    if result.nccom is not None:
        theirs = result.nccom_row(row.op, row.size)
        ratio = theirs.ratio if theirs else None
        line += f" {theirs.busbw:>8.2f}" if theirs else f" {'-':>8}"
        line += f" {ratio:>6.2f}x" if ratio is not None else f" {'-':>7}"
    return line + (f"  {100 * row.peak_ratio:5.1f} % of peak" if row.peak_ratio is not None else "")


def _table(op: str, rows: list[Row], result: CollectivesResult) -> list[str]:
    header, units = HEADER, UNITS
    if result.nccom is not None:
        header, units = header + NCCOM_HEADER, units + NCCOM_UNITS
    lines = ["#", f"# {op}", header, units, *(_line(r, result) for r in rows)]
    entry = next((e for e in result.nccom or [] if e.op == op), None)
    return lines + ([f"# nccom-test: {_nccom_status(entry)}"] if entry and entry.message else [])


def _nccom_status(entry: NccomOp) -> str:
    if entry.status == "failed":
        return f"{entry.command} failed (FAIL nccom below)"
    return terminal(entry.message)


def _text(result: CollectivesResult, **_: Any) -> str:
    lines = [
        f"# neuron-env collectives: {result.world_size} ranks on {len(result.hosts) or '?'} "
        f"host(s), backend {result.backend}, dtype {result.dtype}",
        f"# peak: {result.peak.label}" if result.peak else "# peak: not given (--instance-type)",
        "# time: median over ranks of each rank's median iteration; busbw = algbw x bus factor",
    ]
    if result.nccom is not None:
        lines.append("# nccom: nccom-test's busbw on the same sizes, in GB/s (its GiB/s x 1.074)")
    for op, rows in groupby(result.rows, key=lambda r: r.op):
        lines += _table(op, list(rows), result)
    lines += _footer(result)
    return "\n".join(lines) + "\n"


def _footer(result: CollectivesResult) -> list[str]:
    bounds = "OK" if not result.out_of_bounds else "FAILED"
    lines = [
        f"# Out of bounds values : {result.out_of_bounds} {bounds}",
        f"# Avg bus bandwidth    : {result.avg_busbw:.4f} GB/s",
        *(f"# {terminal(note)}" for note in result.notes),
        "",
    ]
    lines += [f"FAIL {f.kind}: {terminal(f.message)}" for f in result.failures]
    verdict = "collectives: ok" if result.ok else "collectives: FAILED"
    return [*lines, verdict]


# --- json ---------------------------------------------------------------------------------------


def _json(result: CollectivesResult, **_: Any) -> str:
    payload = {
        "backend": result.backend, "world_size": result.world_size, "dtype": result.dtype,
        "rank": result.rank, "hosts": result.hosts, "peak": result.peak, "rows": result.rows,
        "failures": result.failures, "notes": result.notes, "avg_busbw": result.avg_busbw,
        "out_of_bounds": result.out_of_bounds, "complete": result.complete,
        "nccom": result.nccom,
    }  # fmt: skip
    errors = [(f.message, None) for f in result.failures]
    return dumps(document(SCHEMA, payload, outcome(result), errors=errors))


# --- junit --------------------------------------------------------------------------------------


def _junit(result: CollectivesResult, **_: Any) -> str:
    cases = [_case(result, row) for row in result.rows]
    cases += [
        Case("collectives", f.kind, "failure", f.message, kind=f.kind)
        for f in result.failures if f.size is None
    ]  # fmt: skip
    return write_junit("neuron-env collectives", [Suite("collectives", cases)])


def _case(result: CollectivesResult, row: Row) -> Case:
    name = f"{row.op}/{row.size}"
    mine = [f for f in result.failures if f.op == row.op and f.size == row.size]
    text = f"busbw {row.busbw:.3f} GB/s, algbw {row.algbw:.3f} GB/s, time {row.time_s * 1e6:.1f} us"
    if mine:
        return Case("collectives", name, "failure", mine[0].message, kind=mine[0].kind,
                    text="\n".join(f.message for f in mine), time=row.time_s)  # fmt: skip
    return Case("collectives", name, text=text, time=row.time_s)


# --- progress -----------------------------------------------------------------------------------


@contextmanager
def progress() -> Iterator[Callable[[Progress], None]]:
    """The sweep's progress on stderr (stdout holds the report): a bar on a terminal, else a line
    per finished step (CI logs)."""
    from neuron_env.output.console import new_console

    err = new_console(stderr=True)
    if not err.is_terminal:
        yield lambda event: err.print(progress_line(event), markup=False, highlight=False)
        return
    from rich.markup import escape
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn
    from rich.progress import Progress as Bar

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn())
    with Bar(*columns, TimeElapsedColumn(), console=err, transient=True) as bar:
        task = bar.add_task("starting the ranks", total=None)

        def update(event: Progress) -> None:
            description = escape(progress_line(event).strip())
            bar.update(task, completed=event.done, total=event.total, description=description)

        yield update


def progress_line(event: Progress) -> str:
    """``  all_reduce  3/28  32 B  time 319.0 us  busbw 0.00 GB/s``, or nccom-test starting."""
    if event.row is None:
        return f"  nccom-test {event.done + 1}/{event.total}: {event.op}"
    row = event.row
    where = f"{event.done:>{len(str(event.total))}}/{event.total}"
    return (
        f"  {row.op}  {where}  {size_label(row.size)}  time {row.time_s * 1e6:.1f} us  "
        f"busbw {row.busbw:.2f} GB/s"
    )


def _html(result: CollectivesResult, **_: Any) -> str:
    return render(result)


COLLECTIVES: Output[CollectivesResult, CollectivesFormat] = Output(
    CollectivesResult,
    CollectivesFormat,
    {
        CollectivesFormat.text: Format(_text),
        CollectivesFormat.json: Format(_json),
        CollectivesFormat.junit: Format(_junit),
        CollectivesFormat.html: Format(_html),
    },
    outcome=outcome,
)
