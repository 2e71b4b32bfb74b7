"""Reading files that someone else wrote (matrix files, facts snapshots), bounded at the edge.

Every read is bounded before any parsing starts: only regular files (a FIFO, ``/dev/zero`` or a
directory is refused without blocking: the file is opened with ``O_NONBLOCK`` and checked with
``fstat``), at most so many bytes, UTF-8 only. The decoded document is then bounded too: nesting
depth, integer size, string length, and (for matrix files) no control characters. A problem is an
:class:`InputRejected` naming what is wrong and where; each caller turns it into its own error
(a :class:`~neuron_env.errors.MatrixError`, a :class:`~neuron_env.errors.MalformedFile`).
"""

from __future__ import annotations

import gc
import json
import os
import stat
import sys
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from neuron_env.escape import UNSAFE
from neuron_env.frozen import frozen
from neuron_env.schema import format_path

MiB = 1 << 20

# Controls, line/paragraph separators (U+2028, U+2029, U+0085), bidi and invisible characters:
# none belongs in a matrix string, and each of them changes what a rendered file means.
CONTROL_CHARACTERS = UNSAFE


class InputRejected(Exception):
    """A file or document that is not accepted; ``key`` locates the problem inside it."""

    def __init__(self, problem: str, key: str = "") -> None:
        super().__init__(problem)
        self.problem = problem
        self.key = key


class Unreadable(InputRejected):
    """The file could not be opened or read at all; ``problem`` is the system's reason."""


@frozen
class Limits:
    """How much of a kind of file neuron-env reads before refusing it."""

    max_bytes: int
    max_string: int
    max_depth: int = 64
    max_int_bits: int = 64
    controls_allowed: bool = True


MATRIX_LIMITS = Limits(max_bytes=1 * MiB, max_string=4096, controls_allowed=False)
SNAPSHOT_LIMITS = Limits(max_bytes=16 * MiB, max_string=64 * 1024)
TOML_LIMITS = Limits(max_bytes=1 * MiB, max_string=64 * 1024)  # other TOML, such as scan rules
TOOL_OUTPUT_LIMITS = Limits(max_bytes=16 * MiB, max_string=64 * 1024)  # uv's lock and resolution


def read_bytes(path: Path, max_bytes: int) -> bytes:
    """The contents of the regular file ``path``: never blocks, never reads past ``max_bytes``."""

    def read(fd: int, info: os.stat_result) -> bytes:
        if info.st_size > max_bytes:
            size, cap = size_text(info.st_size), size_text(max_bytes)
            raise InputRejected(f"{size}, more than the {cap} allowed")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(max_bytes + 1)

    return _read_regular(path, read)


def read_own_bytes(path: Path, max_bytes: int) -> bytes:
    """:func:`read_bytes` of a file that only this user can have written: owned by this user,
    writable by no other, ``path`` itself not a symlink (what may be unpickled, say);
    :class:`InputRejected` for any other."""

    def read(fd: int, info: os.stat_result) -> bytes:
        if info.st_uid != os.geteuid() or info.st_mode & 0o022:
            raise InputRejected("not this user's own file, or writable by another user")
        if info.st_size > max_bytes:
            raise InputRejected(f"{size_text(info.st_size)}, more than {size_text(max_bytes)}")
        with os.fdopen(os.dup(fd), "rb") as handle:
            return handle.read(max_bytes + 1)

    return _read_regular(path, read, os.O_NOFOLLOW)


def read_head(path: Path, max_bytes: int) -> bytes:
    """The first ``max_bytes`` of the regular file ``path``, however long it is: a /proc file such
    as ``cmdline`` reports size 0 and may hold far more than anyone needs to show."""
    return _read_regular(path, lambda fd, _info: os.pread(fd, max_bytes, 0))


def read_tail(path: Path, max_bytes: int, start: int = 0) -> bytes:
    """The last ``max_bytes`` of the regular file ``path`` (none before offset ``start``): a log
    of any length, read without blocking and without holding more than its tail."""
    return _read_regular(
        path, lambda fd, info: os.pread(fd, max_bytes, max(start, info.st_size - max_bytes))
    )


def _read_regular(
    path: Path, read: Callable[[int, os.stat_result], bytes], flags: int = 0
) -> bytes:
    """``read(fd, fstat)`` on ``path`` opened without blocking, once it is known to be a regular
    file; the descriptor is closed after, and an OS error is :class:`Unreadable`."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC | flags)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputRejected(f"not a regular file but {_kind(info.st_mode)}; nothing was read")
        return read(fd, info)
    except OSError as exc:
        raise Unreadable(exc.strerror or str(exc)) from None
    finally:
        os.close(fd)


def gunzip(data: bytes, max_bytes: int) -> bytes:
    """``data`` (one gzip member) decompressed, never past ``max_bytes``: a bomb stays small."""
    inflater = zlib.decompressobj(wbits=31)
    try:
        out = inflater.decompress(data, max_bytes + 1)
    except zlib.error as exc:
        raise InputRejected(f"not gzip data ({exc})") from None
    if len(out) > max_bytes:
        raise InputRejected(f"more than {size_text(max_bytes)} once decompressed")
    if not inflater.eof:
        raise InputRejected("a gzip stream cut short")
    return out


def read_text(path: Path, max_bytes: int) -> str:
    """``read_bytes`` decoded as UTF-8 (the only encoding neuron-env writes or reads)."""
    return _utf8(read_bytes(path, max_bytes))


def _utf8(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputRejected(_not_utf8(data, exc)) from None


def _not_utf8(data: bytes, exc: UnicodeDecodeError) -> str:
    return f"not UTF-8 text (byte {exc.start} is 0x{data[exc.start]:02x})"


def load_toml(
    path: Path,
    limits: Limits,
    parsed: Callable[[bytes], dict[str, Any] | None] | None = None,
) -> dict[str, Any]:
    """A bounded TOML document.

    ``parsed`` may hand over the document of exactly the bytes read, parsed ahead of time (see
    :mod:`neuron_env.matrix.parsed`); it is bounded like one parsed here.
    """
    raw = read_bytes(path, limits.max_bytes)
    data = parsed(raw) if parsed is not None else None
    if data is None:
        data = parse_toml(_utf8(raw), limits)
    check_document(data, limits)
    return data


def parse_toml(text: str, limits: Limits) -> dict[str, Any]:
    """``text`` as a TOML document; bad TOML, or nesting or integers past ``limits``, is an
    :class:`InputRejected` (the document is not bounded yet: :func:`check_document` does that)."""
    if sys.version_info >= (3, 11):  # imported here: a run whose files were parsed ahead skips it
        import tomllib
    else:  # pragma: no cover - exercised on Python 3.10 hosts
        import tomli as tomllib

    try:
        data: dict[str, Any] = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise InputRejected(f"not valid TOML: {exc}") from None
    except RecursionError:
        raise InputRejected(_too_deep(limits)) from None
    except ValueError:  # an integer past Python's conversion limit (4,300 digits)
        raise InputRejected(
            f"holds an integer of over 4,300 digits; at most {limits.max_int_bits} bits "
            "are accepted"
        ) from None
    return data


def load_json(path: Path, limits: Limits) -> Any:
    """A bounded JSON document."""
    return _json_from_bytes(read_bytes(path, limits.max_bytes), limits)


def load_json_stream(stream: BinaryIO, limits: Limits) -> Any:
    """A bounded JSON document read from ``stream`` (stdin): at most ``limits.max_bytes``."""
    data = stream.read(limits.max_bytes + 1)
    if not data:
        raise InputRejected("empty: nothing was piped in")
    if len(data) > limits.max_bytes:
        raise InputRejected(f"more than the {size_text(limits.max_bytes)} allowed")
    return _json_from_bytes(data, limits)


def _json_from_bytes(data: bytes, limits: Limits) -> Any:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:  # JSON is UTF-8 (RFC 8259)
        raise InputRejected(f"not valid JSON: {_not_utf8(data, exc)}") from None
    return parse_json(text, limits)


def parse_json(text: str, limits: Limits) -> Any:
    """``text`` as a bounded JSON document (also for JSON that arrived another way)."""
    if len(text) > limits.max_bytes:
        raise InputRejected(f"more than the {size_text(limits.max_bytes)} allowed")
    digits = len(str(1 << limits.max_int_bits)) + 1  # one more for a sign

    def bounded_int(literal: str) -> int:
        if len(literal) > digits:
            raise InputRejected(
                f"an integer of {len(literal)} digits; at most {limits.max_int_bits} bits "
                "are accepted"
            )
        return int(literal)

    try:
        doc = json.loads(text, parse_int=bounded_int)
    except json.JSONDecodeError as exc:
        raise InputRejected(f"not valid JSON ({exc})") from None
    except RecursionError:
        raise InputRejected(_too_deep(limits)) from None
    check_document(doc, limits)
    return doc


def check_document(doc: Any, limits: Limits) -> None:
    """Refuse a decoded document past ``limits``: depth, integer size, string length, controls."""
    if type(doc) is dict or type(doc) is list:
        was_enabled = gc.isenabled()
        gc.disable()  # millions of small tuples would trigger full collections, over and over
        try:
            if not _plainly_within_all(doc, limits):
                _check_containers(doc, limits)  # finds the first value past the limits, and where
        finally:
            if was_enabled:
                gc.enable()
    else:
        _check_scalars([doc], None, limits)


def _plainly_within_all(doc: dict[str, Any] | list[Any], limits: Limits) -> bool:
    """A quick yes for a whole document: its depth, then all its strings (keys too) and integers
    gathered and checked each kind at once, at C speed. A no (or a doubt) sends the caller to
    :func:`_check_containers`, which names the first value past the limits and where it is."""
    strings: list[str] = []
    numbers: list[int] = []
    stack: list[tuple[Any, int]] = [(doc, 0)]
    while stack:
        container, depth = stack.pop()
        if depth >= limits.max_depth:
            return False
        if type(container) is dict:
            strings.extend(container)
            values = list(container.values())
        else:
            values = container
        kinds = set(map(type, values))
        if kinds & _CONTAINERS:
            stack.extend((v, depth + 1) for v in values if type(v) is dict or type(v) is list)
        if kinds == _STR:
            strings.extend(values)
        elif kinds == _INT:
            numbers.extend(values)
        elif kinds & _SCALARS:
            strings.extend(v for v in values if type(v) is str)
            numbers.extend(v for v in values if type(v) is int)
    try:
        return (not strings or _plainly_within(strings, _STR, limits)) and (
            not numbers or _plainly_within(numbers, _INT, limits)
        )
    except TypeError:  # a key that is not a string (a document not from JSON): check one by one
        return False


_CONTAINERS = {dict, list}
_SCALARS = {str, int}


def _check_containers(doc: dict[str, Any] | list[Any], limits: Limits) -> None:
    # Each entry: (container, depth, where) with ``where`` a (key, parent where) chain that is
    # turned into a key path only for a message: a 16 MiB document has millions of values.
    stack: list[tuple[Any, int, Any]] = [(doc, 0, None)]
    while stack:
        container, depth, where = stack.pop()
        if depth >= limits.max_depth:
            raise InputRejected(_too_deep(limits), _key_path(where))
        keys: Sequence[str | int]
        if type(container) is dict:
            keys, values = list(container), list(container.values())
            if keys and not _plainly_within(keys, _STR, limits):  # the keys (strings, in JSON)
                _check_scalars(keys, where, limits)
        else:
            keys, values = range(len(container)), container
        kinds = set(map(type, values))
        if kinds & {dict, list}:
            stack.extend(
                (value, depth + 1, (key, where))
                for key, value in zip(keys, values, strict=True)
                if type(value) is dict or type(value) is list
            )
        if kinds & {str, int} and not _scalars_plainly_within(values, kinds, limits):
            for key, value in zip(keys, values, strict=True):
                if type(value) is str or type(value) is int:
                    _check_scalars([value], (key, where), limits)


_STR: set[type] = {str}
_INT: set[type] = {int}


def _scalars_plainly_within(values: Any, kinds: set[type], limits: Limits) -> bool:
    """A quick yes for the strings and the integers among ``values`` (other kinds need no check),
    each kind at C speed; a no sends the caller to check them one by one, naming where."""
    if kinds in (_STR, _INT):
        return _plainly_within(values, kinds, limits)
    strings = [v for v in values if type(v) is str] if str in kinds else []
    numbers = [v for v in values if type(v) is int] if int in kinds else []
    return (not strings or _plainly_within(strings, _STR, limits)) and (
        not numbers or _plainly_within(numbers, _INT, limits)
    )


def _plainly_within(values: Any, kinds: set[type], limits: Limits) -> bool:
    """A quick yes for the bulk of a document (arrays of numbers or of strings), at C speed."""
    if kinds == {int}:
        return bool(max(map(abs, values)).bit_length() <= limits.max_int_bits)
    if kinds == {str}:
        if max(map(len, values)) > limits.max_string:
            return False
        return limits.controls_allowed or not CONTROL_CHARACTERS.search(" ".join(values))
    return False


def _check_scalars(values: Any, where: Any, limits: Limits) -> None:
    for value in values:
        if type(value) is str:
            _check_string(value, where, limits)
        elif type(value) is int and value.bit_length() > limits.max_int_bits:
            raise InputRejected(
                f"an integer of {len(str(value))} digits; at most {limits.max_int_bits} bits "
                "are accepted",
                _key_path(where),
            )


def _check_string(text: str, where: Any, limits: Limits) -> None:
    if len(text) > limits.max_string:
        raise InputRejected(
            f"a string of {len(text):,} characters; at most {limits.max_string:,} are accepted",
            _key_path(where),
        )
    if not limits.controls_allowed and (found := CONTROL_CHARACTERS.search(text)):
        raise InputRejected(
            f"holds the control character U+{ord(found.group()):04X} (line breaks, tabs, "
            "separators and bidirectional controls are not allowed in matrix text)",
            _key_path(where),
        )


def _key_path(where: Any) -> str:
    """``os."ubuntu-24.04".claims[1]`` from a (key, parent) chain, shortened when long."""
    path: list[str | int] = []
    while where is not None:
        key, where = where
        path.append(key)
    text = format_path(path[::-1]) if path else ""
    return text if len(text) <= 60 else text[:60] + "…"


def refuse_control_characters(text: str, what: str) -> None:
    """A path or name that will be shown or rendered: no control character in it."""
    if found := CONTROL_CHARACTERS.search(text):
        raise InputRejected(f"{what} holds the control character U+{ord(found.group()):04X}")


def _too_deep(limits: Limits) -> str:
    return f"nested more than {limits.max_depth} levels deep"


def _kind(mode: int) -> str:
    kinds = [
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ]
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def size_text(n: int) -> str:
    """``1.5 MiB`` or ``2,048 bytes``, for messages."""
    return f"{n / MiB:.1f} MiB" if n >= MiB else f"{n:,} bytes"
