"""What changed between two releases: every fact flattened to a key, then compared."""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Iterator
from typing import Any, Literal

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.frozen import frozen
from neuron_env.matrix.model import Release
from neuron_env.schema import format_path, toml_key

ChangeKind = Literal["added", "removed", "changed"]

# Lists whose entries have a natural identity, so that reordering is not reported as change.
_IDENTITY: dict[str, Callable[[Any], str]] = {
    "pairings": lambda p: f"torch-{p.torch_minor}",
    "dlamis": lambda d: f"{d.kind}/{d.os}",
    "limitations": lambda lim: str(lim.id),
    "claims": lambda c: str(c.source),
}
# Bookkeeping rather than facts about the release.
_SKIPPED = {"sources", "origin", "schema"}
# Explanatory prose: compared only on request, since rewording is not a change of facts.
PROSE = {"note", "notes", "summary"}


Path = tuple[str, ...]


@frozen
class Change:
    """One fact that differs; a whole entry added or removed is a single change."""

    path: Path
    kind: ChangeKind
    before: str | None
    after: str | None

    @property
    def key(self) -> str:
        return format_path(self.path)

    @property
    def section(self) -> str:
        return self.path[0]


def diff_releases(old: Release, new: Release, *, prose: bool = False) -> list[Change]:
    """Changes from ``old`` to ``new``, sorted by key; notes and summaries only with ``prose``."""
    skipped = _SKIPPED if prose else _SKIPPED | PROSE
    before, after = dict(flatten(old, skipped)), dict(flatten(new, skipped))
    changes: list[Change] = []
    for entry in sorted({p[:2] for p in before.keys() | after.keys()}):
        was = {p: v for p, v in before.items() if p[:2] == entry}
        now = {p: v for p, v in after.items() if p[:2] == entry}
        if was and now:
            changes.extend(_field_changes(was, now))
        elif was != now:
            kind: ChangeKind = "added" if now else "removed"
            summary = _summary(now or was, entry)
            changes.append(Change(entry, kind, None if now else summary, summary if now else None))
    return changes


def _field_changes(was: dict[Path, str], now: dict[Path, str]) -> Iterator[Change]:
    for path in sorted(was.keys() | now.keys()):
        a, b = was.get(path), now.get(path)
        if a != b:
            kind: ChangeKind = "added" if a is None else "removed" if b is None else "changed"
            yield Change(path, kind, a, b)


def _summary(values: dict[Path, str], entry: Path) -> str:
    parts = [
        f"{format_path(path[len(entry) :])}: {value}" if path != entry else value
        for path, value in values.items()
        if value not in ("", "(none)") and path[-1] not in ("note", "confirmed")
    ]
    return "; ".join(parts)


def flatten(obj: Any, skipped: set[str], prefix: Path = ()) -> Iterator[tuple[Path, str]]:
    """Yield ``(key path, display value)`` for every scalar fact in ``obj``."""
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            if f.name not in skipped:
                yield from flatten(getattr(obj, f.name), skipped, (*prefix, toml_key(f)))
    elif isinstance(obj, dict):
        for key, value in obj.items():
            yield from flatten(value, skipped, (*prefix, key))
    elif isinstance(obj, tuple) and obj and dataclasses.is_dataclass(obj[0]):
        identity = _IDENTITY.get(prefix[-1] if prefix else "", lambda _: "")
        for i, item in enumerate(obj):
            yield from flatten(item, skipped, (*prefix, identity(item) or str(i)))
    else:
        yield prefix, _display(obj)


def _display(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ", ".join(_display(v) for v in value)
    if isinstance(value, Version | SpecifierSet):
        return str(value)
    if isinstance(value, datetime.date):
        return value.isoformat()
    if value is None:
        return "(none)"
    return str(value)
