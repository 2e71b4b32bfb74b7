"""Escaping for each place text goes: a terminal, a shell, XML, HTML, GitHub workflow commands,
Markdown.

Snapshots, matrix files and paths are written by someone else: a host name, a file name or a
kernel string may hold ``\\n::error …``, an ESC sequence that sets the terminal's title, or a byte
that makes JUnit XML invalid. Renderers pass every such value through the helper of their sink,
one helper each, so the value is shown (visibly, as ``\\x1b``) but never acted on.
"""

from __future__ import annotations

import functools
import re
import shlex

# Characters that act instead of showing: C0 and C1 controls (U+0085 NEXT LINE among them), DEL,
# the line and paragraph separators, bidirectional overrides and isolates, invisible format
# characters, lone surrogates (a JSON "\ud800" decodes to one and cannot be encoded to UTF-8),
# and the Unicode "tag" block, which hides text from readers but not from programs.
_INVISIBLE = (
    "\x7f-\x9f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f"
    "\ufeff\ufff9-\ufffb\ud800-\udfff\U000e0000-\U000e007f"
)
UNSAFE = re.compile(f"[\x00-\x1f{_INVISIBLE}]")
_UNSAFE_BUT_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_INVISIBLE}]")
# The other sinks compile theirs when first used (~0.4 ms each; a terminal run needs none).
_UNSAFE_BUT_LINE_BREAKS = f"[\x00-\x09\x0b\x0c\x0e-\x1f{_INVISIBLE}]"
# XML 1.0 allows tab, newline, carriage return, U+0020–U+D7FF, U+E000–U+FFFD and above U+FFFF;
# of what it allows, what acts on a reader (separators, bidi) is escaped as for a terminal.
_NOT_XML = f"[\x00-\x08\x0b-\x1f{_INVISIBLE}\ufffe\uffff]"
_MARKDOWN_PUNCTUATION = r"([\\`*_\[\]<>|~&])"
# A run of colons that could begin a line once text is wrapped (at a space, a hyphen, a newline):
# CI runners read a log line that starts with "::" (after blanks) as a workflow command.
_COMMAND_START = re.compile(r"(?<!\w)::+")


@functools.cache
def _compiled(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern)


def visible(char: str) -> str:
    """``\\x1b``, ``\\u2028`` or ``\\U000e0041``: a character written so that it cannot act.

    A path or argument with bytes that are not UTF-8 reaches Python with each such byte as a
    surrogate U+DC80-U+DCFF (PEP 383); it is shown as the byte it stands for (``\\xff``)."""
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    if code < 0x100:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def _show(match: re.Match[str]) -> str:
    return visible(match.group())


def terminal(text: str, *, keep_newlines: bool = False) -> str:
    """Text for a terminal or a log: controls, separators and bidi characters made visible.

    ``keep_newlines`` keeps ``\\n`` for text whose lines the caller lays out itself (details);
    single-line values (host names, file names, paths) keep nothing.
    """
    pattern = _UNSAFE_BUT_NEWLINE if keep_newlines else UNSAFE
    return _no_commands(pattern.sub(_show, text))


def _no_commands(text: str) -> str:
    """``\x3a:error::`` for ``::error::`` where a line could start: shown, never run."""
    return _COMMAND_START.sub(lambda m: "\\x3a" * (len(m.group()) - 1) + ":", text)


def shell(text: str) -> str:
    """One shell word, whatever ``text`` holds (``shlex.quote``)."""
    return shlex.quote(text)


def xml(text: str) -> str:
    """Text for an XML 1.0 attribute or element: characters XML cannot hold made visible.

    ElementTree escapes ``<``, ``&`` and quotes but writes ESC or NUL raw, which makes the whole
    document unparseable. Line and paragraph separators and bidi controls, which XML allows, are
    escaped too (CI systems show test names and messages to people), and so is a ``::`` that could
    start a line (a JUnit file printed to a CI log is read for workflow commands too).
    """
    return _no_commands(_compiled(_NOT_XML).sub(_show, text))


def html(text: str, *, keep_newlines: bool = False) -> str:
    """Text for an HTML element or a quoted attribute: markup characters and quotes escaped, and
    characters that act instead of showing (ESC, bidi overrides, separators) made visible.

    A browser would render a bidi override from a host name as reordered text, so it is shown as
    ``\\u202e`` like on a terminal. ``keep_newlines`` keeps ``\\n`` for text laid out in ``<pre>``.
    """
    import html as _html  # its entity table loads only for the HTML reports

    pattern = _UNSAFE_BUT_NEWLINE if keep_newlines else UNSAFE
    return _html.escape(pattern.sub(_show, text), quote=True)


def github_data(text: str) -> str:
    """The message of a GitHub workflow command (``::error::MESSAGE``): one line, inert.

    Newlines are percent-encoded (GitHub shows them as line breaks inside the annotation); other
    controls are made visible so that nothing in the data starts a command of its own.
    """
    shown = _compiled(_UNSAFE_BUT_LINE_BREAKS).sub(_show, text)
    return shown.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def github_property(text: str) -> str:
    """A property of a workflow command (``title=…``): also ``:`` and ``,`` encoded."""
    return github_data(text).replace(":", "%3A").replace(",", "%2C")


def markdown_cell(text: str) -> str:
    """Plain text for a cell of a Markdown table: no markup, links, HTML or cell breaks.

    Characters that start Markdown or HTML are backslash-escaped; a newline becomes ``<br>``.
    """
    escaped = _compiled(_MARKDOWN_PUNCTUATION).sub(r"\\\1", terminal(text, keep_newlines=True))
    return escaped.replace("\n", "<br>")


def markdown_code(text: str) -> str:
    """``text`` as inline code inside a Markdown table cell (a command to copy).

    The code span's fence is one backtick longer than any run of backticks inside, newlines
    become spaces (a code span cannot hold a line break; a raw one would end the table row) and
    ``|`` is escaped, which GitHub removes again inside a table.
    """
    if not text:
        return ""
    body = terminal(text.replace("\n", " ")).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") else ""
    return f"{fence}{pad}{body}{pad}{fence}"
