"""Does a fixed file still parse, with the grammar of the oldest Python it must run on?

``ast.parse(feature_version=...)`` is best effort: on Python 3.12+ it accepts the PEP 701
f-strings (``f"{torch.device("neuron")}"``) that Python 3.10 and 3.11 reject, so that one rule is
checked here on the tokens. Fixes are span edits on the original text (not a concrete-syntax tree,
libcst): the edits are few and small, exact AST positions keep every other byte, and this check
proves each result is still Python before anything is written.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
import warnings

from neuron_env.scan.source import SourceFile

PythonVersion = tuple[int, int]
_PREFIX = "rRbBuUfF"
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12+
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def grammar_problem(text: str, python: PythonVersion) -> str:
    """Why ``text`` is not valid Python ``python``; empty when it is."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            ast.parse(text, feature_version=python)
        except SyntaxError as exc:
            return f"line {exc.lineno}: {exc.msg}"
        except (ValueError, RecursionError, MemoryError) as exc:
            return str(exc) or type(exc).__name__
    if python < (3, 12) and sys.version_info >= (3, 12):
        return _nested_quote_problem(text)
    return ""


def _nested_quote_problem(text: str) -> str:
    """A string inside an f-string's ``{}`` that reuses its quote (valid from Python 3.12 only)."""
    open_quotes: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == _FSTRING_START:
                quote = token.string.lstrip(_PREFIX)
                if open_quotes and _clashes(open_quotes[-1], quote):
                    return _nested_message(token)
                open_quotes.append(quote)
            elif token.type == _FSTRING_END and open_quotes:
                open_quotes.pop()
            elif token.type == tokenize.STRING and open_quotes:
                quote = _quote_of(token.string)
                if _clashes(open_quotes[-1], quote):
                    return _nested_message(token)
    except (tokenize.TokenError, SyntaxError) as exc:
        return str(exc)
    return ""


def _nested_message(token: tokenize.TokenInfo) -> str:
    return f"line {token.start[0]}: a string in an f-string reuses its quotes"


def _quote_of(literal: str) -> str:
    body = literal.lstrip(_PREFIX)
    return body[:3] if body[:3] in ('"""', "'''") else body[:1]


def _clashes(outer: str, inner: str) -> bool:
    return outer[0] == inner[0] and (len(outer) == 1 or len(inner) == 3)


def fstring_quotes(source: SourceFile, tree: ast.Module) -> dict[int, str]:
    """Offset in the text of each expression inside an f-string → that f-string's quote."""
    quotes: dict[int, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.JoinedStr):
            continue
        quote = _quote_of(source.segment(source.span(node)))
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                for inner in ast.walk(value.value):
                    if isinstance(inner, ast.expr):
                        span = source.span(inner)
                        quotes.setdefault(source.offset(span.line, span.column), quote)
    return quotes
