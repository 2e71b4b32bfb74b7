"""``neuron-env collectives`` as nccl-tests' table, the JSON envelope, JUnit and an HTML page
(:mod:`neuron_env.collectives.html_report`); layout only."""

from __future__ import annotations

from itertools import groupby
from typing import Any

from neuron_env.collectives.html_report import render
from neuron_env.collectives.models import CollectivesResult, Row
from neuron_env.output.emit import Format, Outcome, Output, document, dumps, passed
from neuron_env.output.formats import CollectivesFormat
from neuron_env.output.junit_xml import Case, Suite, write_junit

SCHEMA = "collectives"


def outcome(result: CollectivesResult) -> Outcome:
    return passed(result.ok)


# --- text ---------------------------------------------------------------------------------------

HEADER = (
    f"#{'size':>12} {'count':>12} {'type':>9} {'redop':>6} {'time':>10} {'algbw':>8} "
    f"{'busbw':>8} {'#wrong':>7}"
)
UNITS = f"#{'(B)':>12} {'(elements)':>12} {'':>9} {'':>6} {'(us)':>10} {'(GB/s)':>8} {'(GB/s)':>8}"


def _line(row: Row) -> str:
    line = (
        f" {row.size:>12} {row.count:>12} {row.dtype:>9} {row.redop:>6} "
        f"{row.time_s * 1e6:>10.1f} {row.algbw:>8.2f} {row.busbw:>8.2f} {row.wrong:>7}"
    )
    return line + (f"  {100 * row.peak_ratio:5.1f} % of peak" if row.peak_ratio is not None else "")


def _text(result: CollectivesResult, **_: Any) -> str:
    lines = [
        f"# neuron-env collectives: {result.world_size} ranks on {len(result.hosts) or '?'} "
        f"host(s), backend {result.backend}, dtype {result.dtype}",
        f"# peak: {result.peak.label}" if result.peak else "# peak: not given (--instance-type)",
        "# time: median over ranks of each rank's median iteration; busbw = algbw x bus factor",
    ]
    for op, rows in groupby(result.rows, key=lambda r: r.op):
        lines += ["#", f"# {op}", HEADER, UNITS, *(_line(r) for r in rows)]
    lines += _footer(result)
    return "\n".join(lines) + "\n"


def _footer(result: CollectivesResult) -> list[str]:
    bounds = "OK" if not result.out_of_bounds else "FAILED"
    lines = [
        f"# Out of bounds values : {result.out_of_bounds} {bounds}",
        f"# Avg bus bandwidth    : {result.avg_busbw:.4f} GB/s",
        *(f"# {note}" for note in result.notes),
        "",
    ]
    lines += [f"FAIL {f.kind}: {f.message}" for f in result.failures]
    verdict = "collectives: ok" if result.ok else "collectives: FAILED"
    return [*lines, verdict]


# --- json ---------------------------------------------------------------------------------------


def _json(result: CollectivesResult, **_: Any) -> str:
    payload = {
        "backend": result.backend, "world_size": result.world_size, "dtype": result.dtype,
        "rank": result.rank, "hosts": result.hosts, "peak": result.peak, "rows": result.rows,
        "failures": result.failures, "notes": result.notes, "avg_busbw": result.avg_busbw,
        "out_of_bounds": result.out_of_bounds, "complete": result.complete,
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
