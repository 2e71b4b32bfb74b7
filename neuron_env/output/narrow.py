"""Output on a stream that cannot encode all of Unicode (``LANG=en_US`` on glibc is Latin-1,
``PYTHONIOENCODING=ascii``): the marks neuron-env prints become ASCII, never a traceback.

Python writes text to stdout with the locale's encoding and ``strict`` errors: the first ``✗`` on
an ASCII or Latin-1 stdout raised :class:`UnicodeEncodeError`, and the run ended with a traceback
and exit 1, which a CI job reads as "not ready". :func:`tolerate` gives such a stream an error
handler instead: each character of neuron-env's own text that the encoding lacks becomes its
ASCII stand-in (:data:`STAND_INS`), and anything else (a path, a host name) its ``\\uXXXX``
escape, so it can still be told apart. A UTF-8 stream is left as it is. Standard library only.
"""

from __future__ import annotations

import codecs
import sys

HANDLER = "neuron-env-ascii"

STAND_INS = {
    "✓": "+",  # passed
    "✗": "x",  # failed
    "✅": "+",
    "❌": "x",
    "❗": "!",
    "⚠": "!",
    "⏭": "-",
    "\ufe0f": "",  # the emoji variation selector after a mark
    "—": "-",
    "–": "-",
    "→": "->",
    "↔": "<->",
    "·": "-",
    "•": "*",
    "…": "...",
    "×": "x",
    "µ": "u",
    "≥": ">=",
    "≤": "<=",
    "§": "S",
}
"""The ASCII stand-in of each non-ASCII character in neuron-env's own text (a test keeps every
one the package and its data files hold listed here)."""


def _stand_in(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    escaped = (
        STAND_INS.get(char, char.encode("ascii", "backslashreplace").decode()) for char in text
    )
    return "".join(escaped), error.end


def _is_unicode(encoding: str | None) -> bool:
    try:
        name = codecs.lookup(encoding or "ascii").name
    except LookupError:
        return False
    return name.startswith("utf")


def tolerate(*streams: object) -> None:
    """Give each text stream (default: stdout and stderr) whose encoding is not a Unicode one the
    stand-in error handler."""
    for stream in streams or (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is None or _is_unicode(getattr(stream, "encoding", None)):
            continue
        try:
            codecs.lookup_error(HANDLER)
        except LookupError:
            codecs.register_error(HANDLER, _stand_in)
        reconfigure(errors=HANDLER)
