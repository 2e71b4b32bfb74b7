"""The one jinja2 environment that renders neuron-env's text templates (shell, YAML, HCL).

Templates hold layout; Python prepares every value. Two rules keep the output safe:

* ``StrictUndefined``: a name missing from the context is an error, never an empty string.
* Every ``{{ value }}`` must pass through a quoting filter (``sh``, ``sh_args``, ``sh_pipeline``,
  ``yaml``, ``hcl``, ``hcl_heredoc``, ``docker_string``, ``docker_image``, ``json_words``,
  ``comment``) or be declared ``verbatim`` (a file of our own, such as the
  bootstrap script). An unquoted string is refused at render time (see :func:`_finalize`), so a
  template cannot forget to quote a value that reaches a shell.

Templates live in the shipped data directories ``templates/`` and ``ami/``
(:func:`neuron_env.resources.data_dir`) and are named with that prefix, e.g.
``templates/user-data.sh.j2``.
"""

from __future__ import annotations

import functools
import json
import re
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

import jinja2

from neuron_env.errors import BadInput
from neuron_env.resources import data_dir

TEMPLATE_DIRS = ("templates", "ami")

# Control characters have no place in any value we render (names, ids, versions, paths). Besides
# C0, DEL and C1 (U+0085 NEL is one), YAML also ends a line, and so a comment, at U+2028 and
# U+2029, so a note holding one could add a key to a CloudFormation template; the bidirectional
# and zero-width format characters make a value read differently from what it is.
_CONTROL = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]"
)


class Quoted(str):
    """Text that a quoting filter produced; the only strings a template may emit."""

    __slots__ = ()


class UnsafeValue(BadInput):
    """A value that cannot be rendered safely (a control character, or left unquoted)."""


def render(name: str, context: Mapping[str, Any]) -> str:
    """Render the template ``name`` (e.g. ``"templates/user-data.sh.j2"``) with ``context``."""
    return environment().get_template(name).render(context)


@functools.cache
def environment() -> jinja2.Environment:
    """The shared environment: strict undefined, explicit quoting, trailing newlines kept."""
    loader = jinja2.PrefixLoader(
        {name: jinja2.FileSystemLoader(str(data_dir(name))) for name in TEMPLATE_DIRS},
        delimiter="/",
    )
    env = jinja2.Environment(
        loader=loader,
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # noqa: S701 - not HTML: every value is quoted for its language
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        finalize=_finalize,
    )
    env.filters.update(
        sh=sh_quote,
        sh_args=sh_args,
        yaml=yaml_scalar,
        hcl=hcl_string,
        hcl_heredoc=hcl_heredoc_body,
        comment=comment_text,
        verbatim=verbatim,
        sh_pipeline=sh_pipeline,
        docker_string=docker_string,
        docker_image=docker_image,
        json_words=json_words,
    )
    return env


def _finalize(value: Any) -> Any:
    if isinstance(value, Quoted | bool | int | float):
        return value
    raise UnsafeValue(
        f"template value {value!r} was not passed through a quoting filter "
        "(sh, sh_args, yaml, hcl, hcl_heredoc, comment or verbatim)"
    )


def _plain(value: object) -> str:
    if isinstance(value, jinja2.Undefined):
        str(value)  # StrictUndefined raises UndefinedError, naming the missing variable
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise UnsafeValue(f"cannot quote {type(value).__name__} value {value!r}")
    text = str(value)
    if _CONTROL.search(text):
        raise UnsafeValue(
            f"Cannot render {text!a}: it contains a control character or line separator "
            "(a newline, tab, U+2028, ...), which has no place in a name, id, version, path or "
            "note."
        )
    return text


def sh_quote(value: object) -> Quoted:
    """One shell word: ``'it'"'"'s'`` for ``it's``; nothing inside is expanded."""
    return Quoted(shlex.quote(_plain(value)))


def sh_args(values: Iterable[object]) -> Quoted:
    """Shell words separated by spaces, each quoted."""
    return Quoted(" ".join(shlex.quote(_plain(v)) for v in values))


def sh_pipeline(stages: Iterable[Iterable[object]]) -> Quoted:
    """A pipeline: each stage's words quoted, the stages joined by ``|``."""
    return Quoted(" | ".join(" ".join(shlex.quote(_plain(w)) for w in stage) for stage in stages))


def docker_string(value: object) -> Quoted:
    """A Dockerfile double-quoted word (LABEL, ENV): ``\\``, ``"`` and ``$`` escaped, so the
    builder neither ends the word nor substitutes a variable."""
    text = _plain(value).replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$")
    return Quoted(f'"{text}"')


# [registry[:port]/]path[:tag][@digest], as the OCI distribution spec writes image references.
_IMAGE_REFERENCE = re.compile(
    r"(?:[a-z0-9]+(?:[.-][a-z0-9]+)*(?::[0-9]{1,5})?/)?"
    r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
    r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?"
)


def is_image_reference(text: str) -> bool:
    """Whether ``text`` is an image reference a ``FROM`` line can hold as it is."""
    return len(text) <= 255 and _IMAGE_REFERENCE.fullmatch(text) is not None


def docker_image(value: object) -> Quoted:
    """An image reference for ``FROM``, which has no quoting: anything else is refused."""
    text = _plain(value)
    if not is_image_reference(text):
        raise UnsafeValue(f"{text!a} is not an image reference ([REGISTRY/]NAME[:TAG][@DIGEST]).")
    return Quoted(text)


def json_words(values: Iterable[object]) -> Quoted:
    """A JSON array of strings (the exec form of CMD, HEALTHCHECK, SHELL), ASCII only."""
    return Quoted(json.dumps([_plain(v) for v in values], ensure_ascii=True))


def yaml_scalar(value: object) -> Quoted:
    """A YAML double-quoted scalar (JSON string syntax, ASCII only), or a bare number/boolean."""
    if isinstance(value, bool | int):
        return Quoted(json.dumps(value))
    return Quoted(json.dumps(_plain(value), ensure_ascii=True))


def hcl_string(value: object) -> Quoted:
    """An HCL2 quoted string (``${`` and ``%{`` escaped: nothing interpolated), or a number/bool."""
    if isinstance(value, bool | int):
        return Quoted(json.dumps(value))
    text = _plain(value).replace("\\", "\\\\").replace('"', '\\"')
    return Quoted('"' + _no_hcl_templates(text) + '"')


def hcl_heredoc_body(value: str) -> Quoted:
    """Multi-line text for an HCL heredoc, its template sequences escaped."""
    if "\r" in value or "\x00" in value or "\u2028" in value or "\u2029" in value:
        raise UnsafeValue("heredoc text contains a carriage return, NUL or line separator")
    return Quoted(_no_hcl_templates(value))


def comment_text(value: object) -> Quoted:
    """Text for a comment line: control characters (a newline would end the comment) refused."""
    return Quoted(_plain(value))


def verbatim(value: str) -> Quoted:
    """Our own text (a shipped script), emitted unchanged. Never use it for user input."""
    return Quoted(value)


def _no_hcl_templates(text: str) -> str:
    return text.replace("${", "$${").replace("%{", "%%{")
