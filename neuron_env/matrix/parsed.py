"""The shipped matrix files, parsed ahead of time (``matrices/parsed.json``).

Parsing the shipped TOML files was most of what loading the matrix cost: ~10 ms of a 0.15 s
``doctor`` run, every run, for files that change only with a neuron-env release. ``parsed.json``
holds each shipped file's text and its parsed document, and the loader takes a document only for
a file whose text is still exactly that (compared whole: no digest to trust, and no hashing
library to import). The TOML files stay the one source of truth: an edited file is parsed again,
and a missing, damaged or stale ``parsed.json`` costs only the time. A document taken from it is
bounded and validated exactly like a parsed one.

Only the shipped directory is read this way. ``parsed.json`` is written by the maintainers
(``python scripts/refresh_parsed.py`` after editing a shipped file, with :func:`render` and
:func:`write`; a test fails until they do) and ships inside the package, never written at run
time; a ``parsed.json`` in a ``--matrix-dir`` directory is never read, so nothing planted there
can stand in for a file.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from neuron_env.input_files import MATRIX_LIMITS, InputRejected, load_toml, read_bytes

PARSED_FILE = "parsed.json"
FORMAT = 1
_DATE = "$date"  # TOML's local dates, which JSON lacks: {"$date": "2026-10-19"}
_MAX_BYTES = 16 << 20

#: Hands :func:`neuron_env.input_files.load_toml` the document of exactly the bytes it read.
Lookup = Callable[[bytes], dict[str, Any] | None]


def parsed_ahead(directory: Path) -> dict[str, Lookup]:
    """For each file ``parsed.json`` in ``directory`` describes, by name: a lookup that returns
    its document when handed exactly the file's recorded text (as UTF-8), else None. No usable
    ``parsed.json``: no lookups (every file is parsed)."""
    try:
        doc = json.loads(read_bytes(directory / PARSED_FILE, _MAX_BYTES), object_hook=_decode)
    except (InputRejected, ValueError, RecursionError):
        return {}
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        return {}
    files = doc.get("files")
    if not isinstance(files, dict):
        return {}
    lookups: dict[str, Lookup] = {}
    for name, entry in files.items():
        if (
            isinstance(entry, dict)
            and isinstance(entry.get("text"), str)
            and isinstance(entry.get("document"), dict)
        ):
            lookups[name] = _lookup(entry["text"], entry["document"])
    return lookups


def _lookup(text: str, document: dict[str, Any]) -> Lookup:
    try:
        recorded = text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no file has these bytes
        recorded = b""

    def lookup(data: bytes) -> dict[str, Any] | None:
        return document if recorded and data == recorded else None

    return lookup


def _decode(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and isinstance(obj.get(_DATE), str):
        try:
            return datetime.date.fromisoformat(obj[_DATE])
        except ValueError:
            return obj
    return obj


def _encode(value: Any) -> Any:
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return {_DATE: value.isoformat()}
    raise TypeError(f"a {type(value).__name__} value, which parsed.json cannot hold")


def render(directory: Path) -> str:
    """The ``parsed.json`` text for the ``*.toml`` files in ``directory``.

    Each file is read and validated as the loader reads it (within the matrix limits); one that
    cannot be, is not a valid release, or whose document would not come back from JSON unchanged,
    is a :class:`ValueError`.
    """
    from neuron_env.errors import MatrixError
    from neuron_env.matrix.load import release_from  # load imports this module

    files: dict[str, Any] = {}
    read: list[bytes] = []

    def keep(data: bytes) -> None:  # the bytes load_toml read, which it then parses as usual
        read.append(data)

    for path in sorted(directory.glob("*.toml")):
        try:
            document = load_toml(path, MATRIX_LIMITS, parsed=keep)
        except InputRejected as exc:
            raise ValueError(f"{path}: {exc.problem}") from None
        try:
            release_from(path, document)
        except MatrixError as exc:
            raise ValueError(exc.message) from None
        text = json.dumps(document, default=_encode, ensure_ascii=False)
        if json.loads(text, object_hook=_decode) != document:
            raise ValueError(f"{path}: its document does not survive JSON unchanged")
        files[path.name] = {"text": read[-1].decode("utf-8"), "document": document}
    return json.dumps({"format": FORMAT, "files": files}, default=_encode, indent=1) + "\n"


def write(directory: Path, text: str) -> Path:
    """Replace ``directory/parsed.json`` with ``text`` atomically; return its path."""
    import tempfile  # only maintainers write the file

    target = directory / PARSED_FILE
    fd, temporary = tempfile.mkstemp(dir=directory, prefix=f".{PARSED_FILE}.")
    try:
        os.fchmod(fd, 0o644)  # shipped with the package: readable by everyone, like the TOML
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return target
