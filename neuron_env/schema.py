"""Conversion of parsed TOML or JSON into frozen dataclasses (the matrix, host-facts snapshots).

The dataclasses *are* the schema: a field ``default_lnc: int`` is the TOML key ``default-lnc``
holding an integer; a field with a default is optional. Unknown keys fail with a "did you mean"
suggestion, and every error names the key path (``os."ubuntu-24.04".support``), so the loader can
prefix the file name. Only the types the model uses are supported.
"""

from __future__ import annotations

import dataclasses
import datetime
import functools
import types
import typing
from collections.abc import Callable, Hashable, Sequence
from typing import Any, Literal, TypeVar, Union, cast, get_args, get_origin

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_env.frozen import frozen

T = TypeVar("T")

# Field metadata: the TOML key when it is not the field name with "-" for "_",
# or ``toml=False`` for fields the loader fills in (such as the file a release came from).
KEY = "toml_key"
NOT_IN_TOML = "not_in_toml"


class SchemaError(Exception):
    """A value does not fit the schema; ``path`` locates it inside the document."""

    def __init__(self, path: Sequence[str | int], problem: str) -> None:
        super().__init__(problem)
        self.path = tuple(path)
        self.problem = problem

    @property
    def key(self) -> str:
        return format_path(self.path)


def format_path(path: Sequence[str | int]) -> str:
    """Render a key path the way TOML would address it: ``os."ubuntu-24.04".claims[1].source``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
            continue
        segment = part if part.replace("-", "").replace("_", "").isalnum() else f'"{part}"'
        out += segment if not out else f".{segment}"
    return out or "(top level)"


def toml_key(field: dataclasses.Field[Any]) -> str:
    """The TOML key that holds ``field``."""
    return str(field.metadata.get(KEY, field.name.replace("_", "-")))


def suggest(word: str, choices: Sequence[str]) -> str:
    """A "did you mean" clause, or the list of valid choices when nothing is close."""
    return did_you_mean(word, choices) or "expected one of: " + ", ".join(sorted(choices))


def did_you_mean(word: str, choices: Sequence[str]) -> str:
    """``did you mean 'CLOSE'?`` for the closest choice, or "" when none is close."""
    import difflib  # only on the error path

    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else ""


@frozen
class Style:
    """How a document names its keys and whether unknown keys are errors.

    Matrix files use ``kebab-case`` and are strict; JSON snapshots use ``snake_case`` and ignore
    keys that a newer neuron-env added.
    """

    key_of: Callable[[dataclasses.Field[Any]], str]
    strict: bool = True


def _snake_key(field: dataclasses.Field[Any]) -> str:
    return field.name


TOML = Style(key_of=lambda f: toml_key(f))
JSON_LENIENT = Style(key_of=_snake_key, strict=False)


def parse(cls: type[T], data: Any, path: Sequence[str | int] = (), style: Style = TOML) -> T:
    """Convert ``data`` (parsed TOML or JSON) into an instance of dataclass ``cls``."""
    try:
        result: T = _converter(cast(Hashable, cls), style)(data)
        return result
    except SchemaError as exc:
        raise SchemaError([*path, *exc.path], exc.problem) from None


# Converters are compiled once per (type, style) into closures: snapshots of a 1,000-host fleet are
# parsed in a loop. Error paths are built only while an error unwinds (see _inside).
Converter = Callable[[Any], Any]


@functools.cache
def _converter(tp: Any, style: Style) -> Converter:
    origin = get_origin(tp)
    if tp is Any:
        return lambda value: value
    if origin in (Union, types.UnionType):
        (inner,) = [arg for arg in get_args(tp) if arg is not type(None)]
        convert_inner = _converter(inner, style)
        return lambda value: None if value is None else convert_inner(value)
    if origin is Literal:
        choices = get_args(tp)
        return lambda value: _convert_literal(choices, value)
    if origin is tuple:
        return _tuple_converter(_converter(get_args(tp)[0], style))
    if origin is dict:
        return _table_converter(_converter(get_args(tp)[1], style))
    if dataclasses.is_dataclass(tp):
        return _dataclass_converter(tp, style)
    scalar = _SCALARS.get(tp)
    if scalar is None:  # pragma: no cover - a programming error in the model
        raise TypeError(f"schema cannot convert to {tp!r}")
    return scalar


def _dataclass_converter(cls: Any, style: Style) -> Converter:
    hints = typing.get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if not f.metadata.get(NOT_IN_TOML)]
    plan = [
        (style.key_of(f), f.name, _converter(hints[f.name], style), _is_required(f)) for f in fields
    ]
    keys = {key for key, *_ in plan}

    def convert(data: Any) -> Any:
        if not isinstance(data, dict):
            raise SchemaError((), f"expected a table, got {_describe(data)}")
        if style.strict:
            for key in data:
                if key not in keys:
                    raise SchemaError((key,), f"unknown key '{key}'; {suggest(key, sorted(keys))}")
        values: dict[str, Any] = {}
        for key, name, convert_field, required in plan:
            if key in data:
                values[name] = _inside(key, convert_field, data[key])
            elif required:
                raise SchemaError((key,), f"missing required key '{key}'")
        try:
            return cls(**values)
        except ValueError as exc:  # __post_init__ consistency checks
            raise SchemaError((), str(exc)) from None

    return convert


def _inside(key: str | int, convert: Converter, value: Any) -> Any:
    """Convert a child value; on failure, prefix the error's path with the child's key."""
    try:
        return convert(value)
    except SchemaError as exc:
        raise SchemaError((key, *exc.path), exc.problem) from None


def _tuple_converter(convert_item: Converter) -> Converter:
    def convert(value: Any) -> tuple[Any, ...]:
        if not isinstance(value, list):
            raise SchemaError((), f"expected an array, got {_describe(value)}")
        return tuple(_inside(i, convert_item, item) for i, item in enumerate(value))

    return convert


def _table_converter(convert_item: Converter) -> Converter:
    def convert(value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise SchemaError((), f"expected a table, got {_describe(value)}")
        return {key: _inside(key, convert_item, item) for key, item in value.items()}

    return convert


def _is_required(field: dataclasses.Field[Any]) -> bool:
    return field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING


def _convert_literal(choices: tuple[str, ...], value: Any) -> str:
    if not isinstance(value, str):
        raise SchemaError((), f"expected a string, got {_describe(value)}")
    if value not in choices:
        raise SchemaError((), f"invalid value '{value}'; {suggest(value, choices)}")
    return value


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise SchemaError((), f"expected a string, got {_describe(value)}")
    return value


def _bool(value: Any) -> bool:
    if not isinstance(value, bool):
        raise SchemaError((), f"expected true or false, got {_describe(value)}")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise SchemaError((), f"expected an integer, got {_describe(value)}")
    return value


def _float(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SchemaError((), f"expected a number, got {_describe(value)}")
    return float(value)


def _version(value: Any) -> Version:
    text = _str(value)
    try:
        version = Version(text)
    except InvalidVersion:
        raise SchemaError((), f"invalid version '{text}' (expected e.g. '2.14.3.0')") from None
    if str(version) != text:
        raise SchemaError((), f"write version '{text}' in its normal form '{version}'")
    return version


def _specifier(value: Any) -> SpecifierSet:
    text = _str(value)
    try:
        return SpecifierSet(text)
    except InvalidSpecifier:
        raise SchemaError(
            (), f"invalid version specifier '{text}' (expected e.g. '==2.*')"
        ) from None


def _date(value: Any) -> datetime.date:
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return value
    raise SchemaError((), f"expected a date such as 2026-10-19, got {_describe(value)}")


_SCALARS: dict[Any, Converter] = {
    str: _str,
    bool: _bool,
    int: _int,
    float: _float,
    Version: _version,
    SpecifierSet: _specifier,
    datetime.date: _date,
}


def _describe(value: Any) -> str:
    kinds = {
        dict: "a table",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
    }
    for kind, name in kinds.items():
        if isinstance(value, kind):
            return f"{name} ({value!r})" if kind in (str, int, float, bool) else name
    return type(value).__name__
