"""The shared page style (:mod:`neuron_env.output.html_page`): values shown, never run, and a
chart that draws what it is given, on log axes, whatever its range."""

from __future__ import annotations

from neuron_env.output.html_page import Axis, Reference, Series, line_chart, page, table
from tests.support.html_pages import assert_self_contained, parse

HOSTILE = '<script>alert(1)</script>" onload="x\u202e'


def _label(value: float) -> str:
    return f"{value:g}"


def test_every_value_on_a_page_is_text_even_in_attributes_and_the_chart() -> None:
    chart = line_chart(
        [Series(HOSTILE, [(8, 0.5), (1024, 2.0)])],
        Axis(HOSTILE, 2, _label), Axis("busbw", 10, _label), Reference(HOSTILE, 50.0),
    )  # fmt: skip
    markup = page(HOSTILE, chart, table((HOSTILE,), [(HOSTILE,)]))
    parsed = assert_self_contained(markup)
    assert parsed.headings == ['<script>alert(1)</script>" onload="x\\u202e']
    assert parsed.shown().count("<script>alert(1)</script>") == 9
    # title, h1, the line's tooltip and legend, the x axis, the peak's tooltip and label, table
    assert [g["data-series"] for g in parsed.attrs["g"]] == [HOSTILE.replace("\u202e", "\\u202e")]


def test_a_line_per_series_with_points_at_or_below_zero_left_out() -> None:
    chart = line_chart(
        [Series("a", [(8, 0.0), (16, 1.0), (32, 4.0)]), Series("b", [(8, 2.0)]),
         Series("never measured", [(8, 0.0)])],
        Axis("size", 2, _label), Axis("busbw", 10, _label), Reference("peak", 100.0),
    )  # fmt: skip
    parsed = parse(chart)
    assert [len(p["points"].split()) for p in parsed.attrs["polyline"]] == [2, 1]
    assert "never measured" not in parsed.shown()
    assert [line["class"] for line in parsed.attrs["line"] if "class" in line] == ["reference"]
    assert parsed.shown().split()[-3:] == ["a", "b", "peak"]  # the legend


def test_one_point_still_has_an_axis_with_a_labelled_end_each_side() -> None:
    parsed = parse(line_chart([Series("a", [(1024, 3.0)])], Axis("size", 2, _label),
                              Axis("busbw", 10, _label)))  # fmt: skip
    ticks = [t for t in parsed.attrs["text"] if t["class"] == "tick x-tick"]
    assert len(ticks) == 2 and "1024" in parsed.shown() and "2048" in parsed.shown()
    assert parsed.tags["polyline"] == 1
    assert not [line for line in parsed.attrs["line"] if line.get("class") == "reference"]


def test_nothing_measured_says_so_instead_of_an_empty_chart() -> None:
    markup = line_chart([Series("a", [])], Axis("size", 2, _label), Axis("busbw", 10, _label))
    assert "svg" not in parse(markup).tags and "Nothing was measured" in markup
