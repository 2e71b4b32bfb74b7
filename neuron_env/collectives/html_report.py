"""``neuron-env collectives`` as one self-contained HTML page (:mod:`neuron_env.output.html_page`):
the verdict, a chart of busbw against message size per op with the link's peak, then nccl-tests'
table per op. Layout only: every figure and judgement comes from the result."""

from __future__ import annotations

from itertools import groupby

from neuron_env.collectives.models import CollectivesResult, Row
from neuron_env.output.html_page import (
    Axis,
    Reference,
    Series,
    bullets,
    esc,
    line_chart,
    page,
    pairs,
    section,
    table,
    verdict,
)
from neuron_env.wording import size_label

COLUMNS = ("size (B)", "count (elements)", "type", "redop", "time (us)", "min (us)", "max (us)",
           "algbw (GB/s)", "busbw (GB/s)", "#wrong", "of peak")  # fmt: skip
NCCOM_COLUMNS = ("nccom-test busbw (GB/s)", "ours / nccom-test")


def render(result: CollectivesResult) -> str:
    """The whole page."""
    parts = [verdict(result.ok, _summary(result)), section("Run", _run(result))]
    if result.failures:
        failures = bullets(f"{f.kind}: {f.message}" for f in result.failures)
        parts.append(section("Failures", failures))
    parts.append(section("Bus bandwidth against message size", chart(result)))
    for op, rows in groupby(result.rows, key=lambda r: r.op):
        parts.append(section(op, _op_table(result, op, list(rows)), "op"))
    parts.append(section("Summary", pairs(_footer(result))))
    return page(f"neuron-env collectives: {_title(result)}", *parts)


def _title(result: CollectivesResult) -> str:
    hosts = len(result.hosts) or "?"
    return f"{result.world_size} ranks on {hosts} host(s), {result.backend}, {result.dtype}"


def _summary(result: CollectivesResult) -> str:
    if result.ok:
        return f"collectives: ok ({len(result.rows)} measurements, every value right)"
    if not result.complete and not result.failures:
        return "collectives: FAILED (the run did not finish)"
    return f"collectives: FAILED ({len(result.failures)} failure(s))"


def _run(result: CollectivesResult) -> str:
    peak = result.peak.label if result.peak else "not given (--instance-type or --peak-gbps)"
    return pairs([
        ("Backend", result.backend), ("Ranks", result.world_size),
        ("Hosts", ", ".join(result.hosts) or "?"), ("Data type", result.dtype), ("Peak", peak),
        ("Time", "median over ranks of each rank's median iteration"),
        ("busbw", "algbw × the op's bus factor (nccl-tests' definition)"),
    ])  # fmt: skip


def chart(result: CollectivesResult) -> str:
    """busbw against size, a line per op on log axes (sizes by ×2), the peak as a dashed line."""
    series = [
        Series(op, [(r.size, r.busbw) for r in rows])
        for op, rows in groupby(result.rows, key=lambda r: r.op)
    ]
    series += [  # nccom-test's line beside each op it ran, dashed
        Series(f"{e.op} (nccom-test)", [(r.size, r.busbw) for r in e.rows], dashed=True)
        for e in result.nccom or [] if e.rows
    ]  # fmt: skip
    peak = result.peak
    reference = Reference(f"peak: {peak.label}", peak.gbytes_per_s) if peak else None
    return line_chart(
        series, Axis("message size", 2, size_label), Axis("busbw (GB/s)", 10, _gbytes), reference
    )


def _gbytes(value: float) -> str:
    return f"{value:g}"


def _op_table(result: CollectivesResult, op: str, rows: list[Row]) -> str:
    if result.nccom is None:
        return table(COLUMNS, [_cells(r) for r in rows], range(11))
    cells = [_cells(r) + _nccom_cells(result, r) for r in rows]
    entry = next((e for e in result.nccom if e.op == op), None)
    said = entry.message if entry else ""
    note = f'<p class="muted">nccom-test: {esc(said)}</p>' if said else ""
    return table(COLUMNS + NCCOM_COLUMNS, cells, range(13)) + note


def _nccom_cells(result: CollectivesResult, row: Row) -> tuple[object, ...]:
    theirs = result.nccom_row(row.op, row.size)
    if theirs is None:
        return ("—", "—")
    return (f"{theirs.busbw:.2f}", "—" if theirs.ratio is None else f"{theirs.ratio:.2f}×")


def _cells(row: Row) -> tuple[object, ...]:
    ratio = "—" if row.peak_ratio is None else f"{100 * row.peak_ratio:.1f} %"
    return (
        row.size, row.count, row.dtype, row.redop, f"{row.time_s * 1e6:.1f}",
        f"{row.time_min_s * 1e6:.1f}", f"{row.time_max_s * 1e6:.1f}", f"{row.algbw:.2f}",
        f"{row.busbw:.2f}", row.wrong, ratio,
    )  # fmt: skip


def _footer(result: CollectivesResult) -> list[tuple[str, object]]:
    bounds = "OK" if not result.out_of_bounds else "FAILED"
    rows: list[tuple[str, object]] = [
        ("Out of bounds values", f"{result.out_of_bounds} {bounds}"),
        ("Avg bus bandwidth", f"{result.avg_busbw:.4f} GB/s"),
    ]
    return rows + [("Note", note) for note in result.notes]
