"""Writing a release back as a matrix file, in the canonical form the shipped files use.

Tables and keys in schema order (the dataclass fields), entries of keyed tables sorted (inline
tables keep their order), fields at their default value left out, arrays on one line unless that
line would pass 100 characters, ``claims`` one inline table per line. Writing a shipped file's
release reproduces the file (its leading comment lines aside), which a test checks.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Iterator, Sequence
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.matrix.model import Release
from neuron_env.schema import NOT_IN_TOML, format_path, toml_key

LINE = 100


def release_to_toml(release: Release, header: Sequence[str] = ()) -> str:
    """The matrix-file text of ``release``; ``header`` lines become leading ``#`` comments."""
    out = [f"# {line}".rstrip() for line in header]
    body: list[str] = []
    for field, value in _fields(release):
        key = toml_key(field)
        if _is_record(value):
            body.append(_table([key], value))
        elif _is_record_tuple(value):
            body.extend(_table([key], item, array=True) for item in value)
        elif isinstance(value, dict) and value and all(_is_record(v) for v in value.values()):
            body.extend(_table([key, name], value[name]) for name in sorted(value))
        elif isinstance(value, dict):
            body.append(_table([key], value))
        else:
            out.append(f"{key} = {_value(value, len(key) + 3)}")
    return "\n".join([*out, "", "\n\n".join(body)]) + "\n"


def _fields(obj: Any) -> Iterator[tuple[dataclasses.Field[Any], Any]]:
    for field in dataclasses.fields(obj):
        value = getattr(obj, field.name)
        if field.metadata.get(NOT_IN_TOML) or _is_default(field, value):
            continue
        yield field, value


def _is_default(field: dataclasses.Field[Any], value: Any) -> bool:
    if field.default is not dataclasses.MISSING:
        return bool(value == field.default)
    if field.default_factory is not dataclasses.MISSING:  # an empty table (no companions)
        return bool(value == field.default_factory())
    return False


def _table(path: list[str | int], obj: Any, *, array: bool = False) -> str:
    name = format_path(path)
    lines = [f"[[{name}]]" if array else f"[{name}]"]
    items = sorted(obj.items()) if isinstance(obj, dict) else _keyed(obj)
    for key, value in items:
        lines.append(f"{_key(key)} = {_value(value, len(_key(key)) + 3)}")
    return "\n".join(lines)


def _keyed(obj: Any) -> list[tuple[str, Any]]:
    return [(toml_key(field), value) for field, value in _fields(obj)]


def _key(key: str) -> str:
    return key if key.replace("-", "").replace("_", "").isalnum() else json.dumps(key)


def _value(value: Any, indent: int = 0) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str | Version | SpecifierSet):
        return json.dumps(str(value), ensure_ascii=False)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if _is_record(value) or isinstance(value, dict):
        return _inline_table(value)
    if isinstance(value, tuple | list):
        return _array(list(value), indent)
    raise TypeError(f"cannot write {type(value).__name__} to a matrix file")  # pragma: no cover


def _inline_table(value: Any) -> str:
    items = list(value.items()) if isinstance(value, dict) else _keyed(value)
    inner = ", ".join(f"{_key(k)} = {_value(v)}" for k, v in items)
    return f"{{ {inner} }}" if inner else "{}"


def _array(items: list[Any], indent: int) -> str:
    rendered = [_value(item) for item in items]
    one_line = "[" + ", ".join(rendered) + "]"
    if not any(_is_record(item) for item in items) and indent + len(one_line) <= LINE:
        return one_line
    return "[\n" + "".join(f"    {item},\n" for item in rendered) + "]"


def _is_record(value: Any) -> bool:
    return dataclasses.is_dataclass(value) and not isinstance(value, type)


def _is_record_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and bool(value) and all(_is_record(v) for v in value)
