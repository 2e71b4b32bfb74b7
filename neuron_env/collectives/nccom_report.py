"""nccom-test's results as it writes them: the JSON report (``--report-to-json-file``) and the
table it prints (``size(B) count(elems) type time(us) algbw(GB/s) busbw(GB/s)``; newer versions
write ``time:avg(us)``). Pure parsing: sizes in bytes, times in microseconds, bandwidths in its
own unit (GiB/s). Anything else in what it wrote is passed over, never trusted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from neuron_env.frozen import frozen

SIZE, ALGBW, BUSBW = "size(B)", "algbw(GB/s)", "busbw(GB/s)"
TIMES = ("time:avg(us)", "time(us)")


@frozen
class Measured:
    """One size as nccom-test measured it."""

    size: int
    time_us: float
    algbw_gib: float
    busbw_gib: float


def parse_report(doc: Any) -> list[Measured]:
    """The ``results`` of its JSON report; entries that are not its format are left out."""
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        return []
    found = [_entry(item) for item in results if isinstance(item, dict)]
    return [m for m in found if m is not None]


def _entry(item: Mapping[str, Any]) -> Measured | None:
    time = next((item[k] for k in TIMES if k in item), None)
    return _measured(item.get(SIZE), time, item.get(ALGBW), item.get(BUSBW))


def parse_table(text: str) -> list[Measured]:
    """The rows under each ``size(B) ...`` header line of its printed table."""
    found: list[Measured] = []
    columns: tuple[int, int, int, int] | None = None
    for line in text.splitlines():
        words = line.split()
        if words[:1] == [SIZE]:
            columns = _columns(words)
        elif columns is not None and len(words) > max(columns):
            size, time, algbw, busbw = (_number(words[i]) for i in columns)
            measured = _measured(size, time, algbw, busbw)
            found += [measured] if measured else []
    return found


def _columns(header: Sequence[str]) -> tuple[int, int, int, int] | None:
    """Where size, time, algbw and busbw are in a header line (None: not its table)."""
    times = [i for i, word in enumerate(header) if word.startswith("time")]
    if not times or ALGBW not in header or BUSBW not in header:
        return None
    return header.index(SIZE), times[0], header.index(ALGBW), header.index(BUSBW)


def _number(word: str) -> float | int | None:
    try:
        return int(word)
    except ValueError:
        pass
    try:
        return float(word)
    except ValueError:
        return None


def _measured(size: Any, time: Any, algbw: Any, busbw: Any) -> Measured | None:
    """A result only when every figure is a finite number, the size a positive whole count."""
    if isinstance(size, bool) or not isinstance(size, int) or size <= 0:
        return None
    figures = (time, algbw, busbw)
    if not all(_finite(v) for v in figures):
        return None
    return Measured(size, float(time), float(algbw), float(busbw))


def _finite(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value >= 0
    )
