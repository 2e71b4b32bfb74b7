"""The template environment: strict names, and no value reaches the output unquoted."""

from __future__ import annotations

import re
import shlex
import subprocess

import jinja2
import pytest

from neuron_env.templating import UnsafeValue, environment

HOSTILE = ["it's", "$(touch /tmp/pwned)", "`id`", "a b;c", '"x"', "${HOME}", "%{ if }", "\\"]


def render(source: str, **context: object) -> str:
    return environment().from_string(source).render(context)


@pytest.mark.parametrize("value", HOSTILE)
def test_sh_quoting_keeps_hostile_values_one_literal_word(value: str) -> None:
    script = render("printf '%s\\n' {{ v | sh }}", v=value)
    out = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert out.stdout == value + "\n"


def test_sh_args_quotes_every_word() -> None:
    words = ["--name", "it's $(x)", "plain"]
    assert shlex.split(render("{{ v | sh_args }}", v=words)) == words


@pytest.mark.parametrize("value", ["line\nbreak", "tab\there", "nul\x00"])
def test_control_characters_are_refused_for_every_filter(value: str) -> None:
    for name in ("sh", "yaml", "hcl", "comment"):
        with pytest.raises(UnsafeValue, match="control character"):
            render(f"{{{{ v | {name} }}}}", v=value)


@pytest.mark.parametrize(
    "value",
    [
        "a\u2028Transform: x",
        "a\u2029b",
        "a\u0085b",
        "c1\x9b",
        "bidi\u202eevil",
        "zw\u200bsp",
        "\ufeffbom",
    ],
)
def test_unicode_line_breaks_and_format_characters_are_refused_for_every_filter(
    value: str,
) -> None:
    for name in ("sh", "yaml", "hcl", "comment"):
        with pytest.raises(UnsafeValue, match="line separator"):
            render(f"{{{{ v | {name} }}}}", v=value)


def test_non_ascii_text_that_is_not_a_control_character_still_renders() -> None:
    assert render("{{ v | comment }}", v="Ubuntu 26.04 – résumé") == "Ubuntu 26.04 – résumé"
    assert render("{{ v | yaml }}", v="é") == '"\\u00e9"'


def test_a_value_without_a_quoting_filter_is_refused() -> None:
    with pytest.raises(UnsafeValue, match="not passed through a quoting filter"):
        render("echo {{ v }}", v="$(reboot)")


def test_a_missing_name_is_an_error_not_an_empty_string() -> None:
    with pytest.raises(jinja2.UndefinedError):
        render("echo {{ missing | sh }}")


def test_hcl_strings_escape_interpolation_and_quotes() -> None:
    assert render("{{ v | hcl }}", v='a"b${c}%{d}\\') == '"a\\"b$${c}%%{d}\\\\"'
    assert render("{{ v | hcl }} {{ w | hcl }}", v=512, w=True) == "512 true"


def test_yaml_scalars_are_double_quoted_json_strings() -> None:
    assert render("{{ v | yaml }}", v="a: 'b' #c") == "\"a: 'b' #c\""
    assert render("{{ v | yaml }} {{ w | yaml }}", v=2, w=False) == "2 false"


def test_heredoc_bodies_escape_interpolation() -> None:
    assert render("{{ v | hcl_heredoc }}", v="x=${y}\n%{z}\n") == "x=$${y}\n%%{z}\n"


@pytest.mark.parametrize("value", HOSTILE)
def test_docker_strings_escape_quotes_backslashes_and_variables(value: str) -> None:
    quoted = render("{{ v | docker_string }}", v=value)
    assert quoted.startswith('"') and quoted.endswith('"')
    body = quoted[1:-1]
    # Undo the Dockerfile escapes: what remains must be the value, with no bare " or $.
    assert re_unescape(body) == value
    assert not re.search(r'(?<!\\)["$]', body)


def re_unescape(body: str) -> str:
    return re.sub(r"\\(.)", r"\1", body)


@pytest.mark.parametrize(
    "value", ["ubuntu:26.04 AS x", "ubuntu:$(id)", 'a"b', "UPPER:1", "ubuntu:${TAG}", "a\u2028b"]
)
def test_an_image_reference_is_refused_unless_it_is_one(value: str) -> None:
    with pytest.raises(UnsafeValue):
        render("FROM {{ v | docker_image }}", v=value)
    assert render("{{ v | docker_image }}", v="registry:5000/a/b_c:1.0@sha256:" + "0" * 64)


def test_json_words_and_pipelines_quote_every_word() -> None:
    assert render("{{ v | json_words }}", v=["a b", '"', "é"]) == '["a b", "\\"", "\\u00e9"]'
    assert render("{{ v | sh_pipeline }}", v=[["echo", "a b"], ["tee", "$(x)"]]) == (
        "echo 'a b' | tee '$(x)'"
    )
