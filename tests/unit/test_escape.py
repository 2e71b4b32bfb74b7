"""One escaping helper per sink: what each must make inert, and what each must keep."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from neuron_env import escape

HOSTILE = "x\n::error title=t::pwned\x1b]0;owned\x07\r\u2028\u2029\x85\u202e\ud800\U000e0041"


def test_terminal_shows_every_acting_character_visibly() -> None:
    shown = escape.terminal(HOSTILE)
    assert shown.isprintable()
    for visible in ("\\x0a", "\\x1b]0;owned\\x07", "\\x0d", "\\u2028", "\\u2029", "\\x85"):
        assert visible in shown
    assert "\\u202e" in shown and "\\ud800" in shown and "\\U000e0041" in shown


def test_terminal_keeps_newlines_only_when_asked_and_never_a_command_at_a_line_start() -> None:
    kept = escape.terminal("a\n::error::x", keep_newlines=True)
    assert kept == "a\n\\x3a:error::x"
    assert escape.terminal("AWS::Include c10::Error") == "AWS::Include c10::Error"


def test_shell_is_one_word() -> None:
    assert escape.shell("a'; id; '") == "'a'\"'\"'; id; '\"'\"''"


def test_xml_text_parses_and_keeps_what_xml_allows() -> None:
    element = ET.Element("case", name=escape.xml(HOSTILE))
    element.text = escape.xml("tab\there, é, <&>")
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.text == "tab\there, é, <&>"
    assert "\\x1b]0;owned" in parsed.get("name", "")


def test_github_data_and_properties_cannot_start_or_end_a_command() -> None:
    data = escape.github_data("100% done\n::error::x\r\x1b")
    assert data == "100%25 done%0A::error::x%0D\\x1b"
    assert escape.github_property("a:b,c\n") == "a%3Ab%2Cc%0A"


@pytest.mark.parametrize(
    ("text", "cell"),
    [
        ("a|b\nc", "a\\|b<br>c"),
        (
            "[click](http://x) <img src=x> *b* `c` &amp;",
            "\\[click\\](http://x) \\<img src=x\\> \\*b\\* \\`c\\` \\&amp;",
        ),
    ],
)
def test_markdown_cells_hold_no_markup(text: str, cell: str) -> None:
    assert escape.markdown_cell(text) == cell


def test_markdown_code_fences_around_backticks_and_keeps_the_row() -> None:
    assert escape.markdown_code("pip install x") == "`pip install x`"
    assert escape.markdown_code("echo `id` | sh\nnext") == "``echo `id` \\| sh next``"
    assert escape.markdown_code("`x`") == "`` `x` ``"
    assert escape.markdown_code("") == ""


def test_html_escapes_markup_and_quotes_and_shows_what_would_reorder_the_page() -> None:
    shown = escape.html("<b onclick=\"x\">'&'</b>\u202e\x1b[31m\nnext")
    assert (
        shown
        == "&lt;b onclick=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/b&gt;\\u202e\\x1b[31m\\x0anext"
    )
    assert escape.html("a\nb", keep_newlines=True) == "a\nb"


@pytest.mark.integration  # runs the console script
def test_a_path_that_is_not_utf8_shows_its_bytes(tmp_path: Path) -> None:
    """``--python /tmp/<0xff 0xfe>``: the error names the bytes the user typed, not surrogates."""
    import subprocess

    from tests.support.cli import cli_argv, machine_env

    missing = os.fsencode(tmp_path) + b"/\xff\xfe"
    argv = [os.fsencode(a) for a in cli_argv("doctor", "--python")] + [missing]
    result = subprocess.run(argv, capture_output=True, env=machine_env(), check=False)
    assert result.returncode == 2
    said = b" ".join(result.stderr.split())
    assert b"/\\xff\\xfe does not exist" in said
    assert b"udc" not in said
