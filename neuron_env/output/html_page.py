"""The one page style of neuron-env's HTML reports (evaluate, collectives, fleet report).

A page is self-contained: inline CSS, inline SVG, no JavaScript, no request to anywhere (a report
is opened from a CI artifact or a laptop without network, and must not phone home). Every value
goes through :func:`esc` (:func:`neuron_env.escape.html`) unless it is :class:`Html` already, so a
host name or a model name is shown, never run. Charts are drawn here (:func:`line_chart`) so that
every page's axes, colours and legends look alike.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence

from neuron_env import __version__
from neuron_env.escape import html
from neuron_env.frozen import frozen

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#1f2937;
padding:0 1em}h1{font-size:1.5em;margin-bottom:.2em}
h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #e5e7eb}
table{border-collapse:collapse;margin:.5em 0;width:100%}th,td{text-align:left;padding:.3em .6em;
border-bottom:1px solid #e5e7eb;vertical-align:top}th{background:#f9fafb}td.num{text-align:right;
font-variant-numeric:tabular-nums;white-space:nowrap}
.verdict{padding:.6em 1em;border-radius:6px;font-weight:600}.ok{background:#dcfce7;color:#166534}
.bad{background:#fee2e2;color:#991b1b}.status{font-weight:600}.s-pass,.s-ok{color:#15803d}
.s-fail,.s-error,.s-timeout,.s-fallback{color:#b91c1c}.s-warn{color:#b45309}.muted{color:#6b7280}
pre{background:#f3f4f6;padding:.5em .8em;border-radius:4px;white-space:pre-wrap}
svg text{font:12px system-ui,sans-serif;fill:#374151}
""".strip()

PALETTE = ("#2563eb", "#d97706", "#059669", "#db2777", "#7c3aed", "#0891b2", "#65a30d")
"""Series colours, in order; distinguishable in print and for the common colour blindnesses."""


class Html(str):
    """Markup that is already escaped."""


def esc(value: object) -> Html:
    """``value`` as HTML text (markup as it is when it is :class:`Html`)."""
    return value if isinstance(value, Html) else Html(html(str(value), keep_newlines=True))


def page(title: str, *parts: str) -> str:
    """The whole document: ``title`` as its title and first heading, then ``parts``."""
    body = [f"<h1>{esc(title)}</h1>", *parts, f'<p class="muted">neuron-env {esc(__version__)}</p>']
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)}</title>\n<style>\n{STYLE}\n</style>\n"
        "</head>\n<body>\n" + "\n".join(body) + "\n</body>\n</html>\n"
    )


def verdict(ok: bool, summary: str) -> str:
    """The run's verdict, first on the page, green or red."""
    css, mark = ("ok", "✓") if ok else ("bad", "✗")
    return f'<p class="verdict {css}">{mark} {esc(summary)}</p>'


def section(title: str, content: str, css: str | None = None) -> str:
    """A titled part of the page (``css``: its class, for pages that hold several alike)."""
    attribute = f' class="{esc(css)}"' if css else ""
    return f"<section{attribute}>\n<h2>{esc(title)}</h2>\n{content}\n</section>"


def status(word: str) -> Html:
    """A status word (pass, fail, warn, ...) in its colour."""
    return Html(f'<span class="status s-{esc(word)}">{esc(word)}</span>')


def table(
    headers: Sequence[str], rows: Iterable[Sequence[object]], numeric: Sequence[int] = ()
) -> str:
    """A table; cells are escaped unless they are :class:`Html`; ``numeric`` columns align right."""
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc(c)}</td>' if i in numeric else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>\n"
        for row in rows
    )
    return f"<table>\n<thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody>\n</table>"


def pairs(rows: Iterable[tuple[str, object]]) -> str:
    """A two-column table of names and values."""
    body = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>\n" for k, v in rows)
    return f"<table>\n<tbody>\n{body}</tbody>\n</table>"


def bullets(items: Iterable[object]) -> str:
    return "<ul>" + "".join(f"<li>{esc(item)}</li>" for item in items) + "</ul>"


# --- line chart ---------------------------------------------------------------------------------

WIDTH, HEIGHT = 820, 420
LEFT, RIGHT, TOP, BOTTOM = 70, 170, 20, 50  # margins: tick labels left and below, legend right
DASHED = ' stroke-dasharray="6 4"'


@frozen
class Series:
    """One line: its name (in the legend) and its (x, y) points; ``dashed`` for a line drawn
    for comparison (another tool's figures)."""

    name: str
    points: Sequence[tuple[float, float]]
    dashed: bool = False


@frozen
class Axis:
    """A logarithmic axis: its label, its base (ticks at its powers) and how a tick reads."""

    label: str
    base: float
    tick: Callable[[float], str]


@frozen
class Reference:
    """A horizontal line across the chart (e.g. the link's peak), labelled."""

    label: str
    value: float


@frozen
class _Scale:
    low: float  # exponents of the axis's base at its ends
    high: float
    base: float

    def at(self, value: float, start: float, length: float) -> float:
        share = (math.log(value, self.base) - self.low) / (self.high - self.low)
        return start + length * share


def line_chart(
    series: Sequence[Series], x: Axis, y: Axis, reference: Reference | None = None
) -> str:
    """Log-log lines, one ``<polyline>`` per series, the reference as a dashed ``<line>``.

    Points at or below zero cannot be drawn on a log axis and are left out of their line.
    """
    drawn = [
        Series(s.name, [(a, b) for a, b in s.points if a > 0 and b > 0], s.dashed) for s in series
    ]
    drawn = [s for s in drawn if s.points]
    if not drawn:
        return '<p class="muted">Nothing was measured to draw.</p>'
    xs = [a for s in drawn for a, _ in s.points]
    ys = [b for s in drawn for _, b in s.points] + ([reference.value] if reference else [])
    sx, sy = _scale(xs, x.base), _scale(ys, y.base)
    names = ", ".join(s.name for s in drawn)
    parts = [
        f'<svg width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="{esc(f"{y.label} against {x.label}: {names}")}">',
        *_grid(sx, sy, x, y),
        *(_polyline(s, PALETTE[i % len(PALETTE)], sx, sy) for i, s in enumerate(drawn)),
        *([_reference(reference, sy)] if reference else []),
        *_legend(drawn, reference),
        "</svg>",
    ]
    return "\n".join(parts)


def _scale(values: Sequence[float], base: float) -> _Scale:
    """From a power of ``base`` below the values to one above, ticks every :func:`_step` powers
    (the top end rounded up to a tick, so that both ends are labelled)."""
    low = math.floor(math.log(min(values), base) + 1e-9)
    high = max(math.ceil(math.log(max(values), base) - 1e-9), low + 1)
    step = _step(high - low)
    return _Scale(low, low + step * math.ceil((high - low) / step), base)


def _step(span: float, most: int = 10) -> int:
    return max(1, math.ceil(span / most))


def _px(sx: _Scale, sy: _Scale, a: float, b: float) -> tuple[float, float]:
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM
    return sx.at(a, LEFT, plot_w), sy.at(b, TOP + plot_h, -plot_h)


def _ticks(scale: _Scale) -> list[float]:
    """Powers of the base from end to end, every one or every few (at most ten)."""
    span = int(scale.high - scale.low)
    return [scale.base ** (scale.low + k) for k in range(0, span + 1, _step(span))]


def _grid(sx: _Scale, sy: _Scale, x: Axis, y: Axis) -> list[str]:
    left, bottom = _px(sx, sy, sx.base**sx.low, sy.base**sy.low)
    right, top = _px(sx, sy, sx.base**sx.high, sy.base**sy.high)
    middle = (top + bottom) / 2
    parts = [f'<rect x="{left:.1f}" y="{top:.1f}" width="{right - left:.1f}" '
             f'height="{bottom - top:.1f}" fill="none" stroke="#9ca3af"/>']  # fmt: skip
    for value in _ticks(sx):
        px = _px(sx, sy, value, sy.base**sy.low)[0]
        parts.append(_gridline(px, top, px, bottom))
        parts.append(_text("tick x-tick", px, bottom + 16, x.tick(value), "middle"))
    for value in _ticks(sy):
        py = _px(sx, sy, sx.base**sx.low, value)[1]
        parts.append(_gridline(left, py, right, py))
        parts.append(_text("tick y-tick", left - 6, py + 4, y.tick(value), "end"))
    parts.append(_text("axis-label x-label", (left + right) / 2, HEIGHT - 10, x.label, "middle"))
    turned = f' transform="rotate(-90 14 {middle:.1f})"'
    parts.append(_text("axis-label y-label", 14, middle, y.label, "middle", turned))
    return parts


def _gridline(x1: float, y1: float, x2: float, y2: float) -> str:
    return f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="#e5e7eb"/>'


def _text(css: str, x: float, y: float, words: str, anchor: str, extra: str = "") -> str:
    return (
        f'<text class="{css}" x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}"{extra}>'
        f"{esc(words)}</text>"
    )


def _polyline(series: Series, colour: str, sx: _Scale, sy: _Scale) -> str:
    points = " ".join("{:.1f},{:.1f}".format(*_px(sx, sy, a, b)) for a, b in series.points)
    dots = "".join(
        '<circle cx="{:.1f}" cy="{:.1f}" r="2.5"/>'.format(*_px(sx, sy, a, b))
        for a, b in series.points
    )
    return (
        f'<g class="series" data-series="{esc(series.name)}" fill="{colour}">'
        f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="2"'
        f"{DASHED if series.dashed else ''}>"
        f"<title>{esc(series.name)}</title></polyline>{dots}</g>"
    )


def _reference(reference: Reference, sy: _Scale) -> str:
    y = sy.at(reference.value, HEIGHT - BOTTOM, -(HEIGHT - TOP - BOTTOM))
    return (
        f'<line class="reference" x1="{LEFT}" y1="{y:.1f}" x2="{WIDTH - RIGHT}" y2="{y:.1f}" '
        f'stroke="#b91c1c" stroke-width="1.5" stroke-dasharray="6 4">'
        f"<title>{esc(reference.label)}</title></line>"
        f'<text class="reference-label" x="{WIDTH - RIGHT - 4}" y="{y - 5:.1f}" '
        f'text-anchor="end" fill="#b91c1c">{esc(reference.label)}</text>'
    )


def _legend(series: Sequence[Series], reference: Reference | None) -> list[str]:
    x = WIDTH - RIGHT + 16
    entries = [
        (s.name, PALETTE[i % len(PALETTE)], DASHED if s.dashed else "")
        for i, s in enumerate(series)
    ]
    if reference is not None:
        entries.append(("peak", "#b91c1c", DASHED))
    return [
        f'<line x1="{x}" y1="{TOP + 10 + 20 * i}" x2="{x + 22}" y2="{TOP + 10 + 20 * i}" '
        f'stroke="{colour}" stroke-width="2"{dash}/>'
        f'<text class="legend" x="{x + 28}" y="{TOP + 14 + 20 * i}">{esc(name)}</text>'
        for i, (name, colour, dash) in enumerate(entries)
    ]
