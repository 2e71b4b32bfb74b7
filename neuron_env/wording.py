"""Small helpers that turn lists into readable English for messages, and lay them out."""

from __future__ import annotations

import re
import textwrap
from collections.abc import Iterable

QUOTED = re.compile(r"(?<![\w'])'[^'\n]+'(?![\w'])")
"""A span in single quotes that is not an apostrophe: a command quoted in a sentence."""
_NO_BREAK = "\x00"  # where textwrap never breaks, and no printed text holds (escape.terminal)


def join_words(items: Iterable[str], conjunction: str = "and") -> str:
    """``a, b and c``."""
    words = list(items)
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + f" {conjunction} " + words[-1]


def version_span(versions: Iterable[str]) -> str:
    """``3.12–3.14`` for three or more consecutive minors, else ``3.12 and 3.13``."""
    items = list(versions)
    minors = [int(v.split(".")[1]) for v in items]
    consecutive = minors == list(range(minors[0], minors[0] + len(minors))) if minors else False
    return f"{items[0]}–{items[-1]}" if consecutive and len(items) > 2 else join_words(items)


def plural(count: int, noun: str) -> str:
    """``1 device``, ``2 devices``."""
    return f"{count} {noun}" + ("" if count == 1 else "s")


def shorten_words(text: str, limit: int) -> str:
    """``text`` cut to about ``limit`` characters at a space, never inside a word, with `` …``
    where something was left out (a first word longer than ``limit`` is kept whole)."""
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit + 1)
    if cut <= 0:
        first = text.find(" ")
        return text if first < 0 else text[:first] + " …"
    return text[:cut].rstrip() + " …"


SIZE_UNITS = (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))


def size_label(size: float) -> str:
    """``8 B``, ``64 KiB``, ``1 GiB``: a size in binary units."""
    for unit, scale in SIZE_UNITS:
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"


def seconds(value: float | None) -> str:
    """A duration as people read it: 1.23 s, 4.56 ms or 789 µs (None: an em dash)."""
    if value is None:
        return "—"
    if value >= 1:
        return f"{value:.2f} s"
    if value >= 1e-3:
        return f"{value * 1e3:.2f} ms"
    return f"{value * 1e6:.0f} µs"


def wrap_words(text: str, width: int) -> list[str]:
    """``text`` in lines of ``width``, split at spaces only: never mid-word (paths, URLs, pins
    stay whole), never at a hyphen, never inside a quoted command (``'neuron-env install ...'``),
    which is pasted whole. A width under 1 (a terminal too narrow to say) is one word a line."""
    kept = QUOTED.sub(lambda m: m.group(0).replace(" ", _NO_BREAK), text)
    lines = textwrap.wrap(kept, max(width, 1), break_long_words=False, break_on_hyphens=False)
    return [line.replace(_NO_BREAK, " ") for line in lines]
