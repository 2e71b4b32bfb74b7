"""The overlay release file ``matrix verify --write`` leaves behind.

It is the whole release (a user file replaces the shipped file of the same version), with what the
indexes contradicted replaced by what they showed and what they confirmed marked confirmed. Each
https index becomes a ``[sources]`` entry (``index-neuron``) that the touched facts cite; the date
goes into their notes as ``(index check 2026-12-03: ...)``, which the next check replaces. A value
the index shows but cannot tie to the release (the newest compiler when none matches the pin)
goes in with ``confirmed = false``. The file is written in canonical form, atomically.
"""

from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from neuron_env.errors import BadInput
from neuron_env.matrix import Release
from neuron_env.matrix.commands.indexcheck.facts import Fact
from neuron_env.matrix.commands.indexcheck.simple import strip_credentials
from neuron_env.matrix.commands.indexcheck.verify import Verification
from neuron_env.matrix.load import validate_release
from neuron_env.matrix.model import (
    Claim,
    Companion,
    LegacyXla,
    OsRelease,
    Pairing,
    PipPackage,
    Placeholder,
    ReleaseInfo,
)
from neuron_env.matrix.write import release_to_toml
from neuron_env.schema import SchemaError

_GUESSED = "not tied to this release by the index"
Pinned = TypeVar("Pinned", PipPackage, Companion)
Row = TypeVar("Row")
# A record of the release, the facts the indexes showed about it, the sources, the date stamp.
Correction = Callable[[Row, list[Fact], dict[str, str], str], Row]
_CHECK_NOTE = re.compile(r"\s*\(index check \d{4}-\d{2}-\d{2}:[^)]*\)")


def write_overlay(release: Release, result: Verification, directory: Path) -> Path:
    """Write ``<version>.toml`` into ``directory`` (created if needed); its path."""
    corrected = corrected_release(release, result)
    try:  # what matrix validate would say, before anything is written
        validate_release(corrected)
    except (SchemaError, ValueError) as exc:
        raise BadInput(
            f"The indexes' answers do not make a valid Neuron {release.version} file ({exc}); "
            "nothing was written.",
            hint="Check the indexes (--neuron-index, --pytorch-index) and run again without "
            "--write to see what they show.",
        ) from None
    header = [
        f"Neuron SDK {release.version}: checked against its package indexes on {result.checked_on}",
        "by 'neuron-env matrix verify --write'.",
        "Use it with --matrix-dir DIR or NEURON_ENV_MATRIX_DIR=DIR; check again to refresh it.",
    ]
    directory.mkdir(parents=True, exist_ok=True)
    target = directory / f"{release.version}.toml"
    _write_atomically(target, release_to_toml(corrected, header))
    return target


def corrected_release(release: Release, result: Verification) -> Release:
    """``release`` with the verification's findings applied."""
    sources = _index_sources(result)
    stamp = f"index check {result.checked_on}"
    by_key: dict[str, list[Fact]] = {}
    for fact in result.facts:
        by_key.setdefault(_record_key(fact.key), []).append(fact)
    pairings = tuple(
        _pairing(p, by_key.get(f"pairings[{i}]", []), sources, stamp)
        for i, p in enumerate(release.pairings)
    )

    def corrected(
        records: Mapping[str, Row], correct: Correction[Row], key: Callable[[str], str]
    ) -> dict[str, Row]:
        """Each of ``records`` corrected by the facts about it (``key``: their record's key)."""
        return {
            name: correct(entry, by_key.get(key(name), []), sources, stamp)
            for name, entry in records.items()
        }

    packages = corrected(release.packages, _package, _package_key)
    os_rows = corrected(release.os, _os_row, _os_key)
    placeholders = corrected(release.placeholders, _placeholder, _placeholder_key)
    companions = corrected(release.companions, _package, _companion_key)
    legacy = _legacy(release.legacy_xla, by_key.get("legacy-xla.last", []), sources, stamp)
    info = _release_info(release.release, by_key.get("release.min-glibc", []), sources, stamp)
    cited = {
        *info.sources,
        *(key for p in pairings for key in p.sources),
        *(key for package in packages.values() for key in package.sources),
        *(claim.source for entry in os_rows.values() for claim in entry.claims),
        *(key for entry in placeholders.values() for key in entry.sources),
        *(key for entry in companions.values() for key in entry.sources),
        *legacy.sources,
    }
    all_sources = {**release.sources, **{k: v for k, v in sources.items() if k in cited}}
    return dataclasses.replace(
        release,
        release=info,
        pairings=pairings,
        packages=packages,
        os=os_rows,
        placeholders=placeholders,
        legacy_xla=legacy,
        sources=dict(sorted(all_sources.items())),
        companions=companions,
    )


def _index_sources(result: Verification) -> dict[str, str]:
    """``index-<name>`` → URL for each https index (matrix sources must be https)."""
    return {
        f"index-{ix.name}": strip_credentials(ix.url)
        for ix in result.indexes
        if ix.readable and ix.url.startswith("https://")
    }


def _source_of(fact: Fact, sources: dict[str, str]) -> str | None:
    key = f"index-{fact.index}"
    return key if key in sources else None


def _pairing(p: Pairing, facts: list[Fact], sources: dict[str, str], stamp: str) -> Pairing:
    if not facts:
        return p
    changes: dict[str, Any] = {}
    for fact in facts:
        if fact.status != "contradicted" or fact.value is None:
            continue
        field = fact.key.split(".", 1)[1].replace("-", "_")
        changes[field] = fact.value
    summary = _summary(facts)
    return dataclasses.replace(
        p,
        **changes,
        confirmed=p.confirmed or all(f.status != "unknown" for f in facts),
        note=_with_check(p.note, f"{stamp}: {summary}"),
        sources=_cite(p.sources, facts, sources),
    )


def _package(package: Pinned, facts: list[Fact], sources: dict[str, str], stamp: str) -> Pinned:
    """A pinned package or companion: confirmed, replaced by what the index shows, or noted."""
    if not facts:
        return package
    (fact,) = facts
    if fact.status == "confirmed":
        # A version an earlier check took in place of a pin stays as unconfirmed as it was then.
        guessed = _GUESSED in package.note
        said = f"{stamp}: on the {fact.index} index" + (f"; {_GUESSED}" if guessed else "")
        note = _with_check(package.note, said)
        cite = _cite(package.sources, facts, sources)
        confirmed = package.confirmed or not guessed
        return dataclasses.replace(package, confirmed=confirmed, note=note, sources=cite)
    if fact.status == "contradicted" and fact.value is not None:
        told = f"{stamp}: {fact.index_shows}; {fact.value} is taken, {_GUESSED}"
        return dataclasses.replace(
            package,
            version=fact.value,
            spec=None,
            confirmed=False,
            note=_with_check(package.note, told),
            sources=_cite(package.sources, facts, sources),
        )
    return dataclasses.replace(
        package, note=_with_check(package.note, f"{stamp}: {fact.index_shows}")
    )


def _os_row(entry: OsRelease, facts: list[Fact], sources: dict[str, str], stamp: str) -> OsRelease:
    fact = _the_known(facts)
    if fact is None:
        return entry
    wheels = fact.value if fact.status == "contradicted" else entry.wheels
    instead = entry.instead
    if not wheels and not instead:
        instead = f"No torch-neuronx wheel installs here: {fact.index_shows}. Use a newer OS."
    source = _source_of(fact, sources)
    if source is None:  # a plain-http index cannot be cited: say it in the note
        note = _with_check(entry.note, f"{stamp}: {fact.index_shows}")
        return dataclasses.replace(entry, wheels=wheels, instead=instead, note=note)
    claims = tuple(c for c in entry.claims if c.source != source)
    claim = Claim(source=source, wheels=wheels, note=f"{stamp}: {fact.index_shows}.")
    return dataclasses.replace(entry, wheels=wheels, instead=instead, claims=(*claims, claim))


def _placeholder(
    entry: Placeholder, facts: list[Fact], sources: dict[str, str], stamp: str
) -> Placeholder:
    """The versions the default index lists; whether they are placeholders stays as it was."""
    fact = _the_known(facts)
    if fact is None:
        return entry
    versions = fact.value if fact.status == "contradicted" and fact.value else entry.versions
    return dataclasses.replace(
        entry,
        versions=versions,
        note=_with_check(entry.note, f"{stamp}: the default index lists {fact.index_shows}"),
        sources=_cite(entry.sources, [fact], sources),
    )


def _legacy(entry: LegacyXla, facts: list[Fact], sources: dict[str, str], stamp: str) -> LegacyXla:
    fact = _the_known(facts)
    if fact is None:
        return entry
    last = fact.value if fact.status == "contradicted" and fact.value is not None else entry.last
    return dataclasses.replace(
        entry,
        last=last,
        note=_with_check(entry.note, f"{stamp}: the newest legacy build is {fact.index_shows}"),
        sources=_cite(entry.sources, [fact], sources),
    )


def _release_info(
    info: ReleaseInfo, facts: list[Fact], sources: dict[str, str], stamp: str
) -> ReleaseInfo:
    fact = _the_known(facts)
    if fact is None:
        return info
    glibc = fact.value if fact.status == "contradicted" else info.min_glibc
    notes = tuple(n for n in info.notes if not _CHECK_NOTE.fullmatch(f" {n}"))
    if fact.status == "contradicted":
        notes += (_with_check("", f"{stamp}: PyTorch wheels need {fact.index_shows}"),)
    return dataclasses.replace(
        info, min_glibc=glibc, notes=notes, sources=_cite(info.sources, [fact], sources)
    )


def _the_known(facts: list[Fact]) -> Fact | None:
    """The one fact an index established about a single-valued record, or None where no index
    could tell."""
    known = [f for f in facts if f.status != "unknown"]
    if not known:
        return None
    (fact,) = known
    return fact


def _summary(facts: list[Fact]) -> str:
    changed = [f for f in facts if f.status == "contradicted" and f.value is not None]
    said = " and ".join(f"the {name} index" for name in sorted({f.index for f in facts if f.index}))
    if not changed:
        return f"confirmed by {said}"
    what = ", ".join(f"{f.key.split('.', 1)[1]} was {f.file_says}" for f in changed)
    return f"as read from {said}; {what}"


def _with_check(note: str, check: str) -> str:
    """``note`` with any earlier index-check remark replaced by ``(check)``."""
    kept = _CHECK_NOTE.sub("", note).strip()
    # No parentheses inside the remark, so that the next check finds where it ends (and no
    # square brackets, which a terminal renderer could take for markup).
    check = re.sub(r"\s*[(\[]", ", ", check)
    check = re.sub(r"[)\]]", "", check)
    return f"{kept} ({check})" if kept else f"({check})"


def _cite(
    existing: tuple[str, ...], facts: Iterable[Fact], sources: dict[str, str]
) -> tuple[str, ...]:
    added = [s for s in (_source_of(f, sources) for f in facts) if s and s not in existing]
    return (*existing, *dict.fromkeys(added))


def _record_key(key: str) -> str:
    """The record a fact's key belongs to: ``pairings[0]`` for ``pairings[0].python``."""
    return key.split(".", 1)[0] if key.startswith("pairings[") else key


def _package_key(name: str) -> str:
    return f'packages."{name}"' if "." in name else f"packages.{name}"


def _companion_key(name: str) -> str:
    return f'companions."{name}"' if "." in name else f"companions.{name}"


def _placeholder_key(name: str) -> str:
    return f'placeholders."{name}"' if "." in name else f"placeholders.{name}"


def _os_key(os_id: str) -> str:
    return f'os."{os_id}".wheels' if "." in os_id else f"os.{os_id}.wheels"


def _write_atomically(target: Path, text: str) -> None:
    """A temporary file in the same directory, then ``os.replace``: never half a file."""
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        Path(temporary).chmod(0o644)  # a team's shared file, not a private one (mkstemp: 0600)
        Path(temporary).replace(target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
