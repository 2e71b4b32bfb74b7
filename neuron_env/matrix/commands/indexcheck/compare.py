"""A release file's facts, each confirmed, contradicted or left unknown by the indexes (pure).

The indexes can say which versions exist, which is the newest build of a family, which CPython
versions have wheels and which glibc the wheels need. They cannot say which build belongs to which
Neuron release: a range pin (``neuronx-cc ==2.*``) stays unknown, and a newer build of a family is
a contradiction only when no later release in the matrix already names it.
"""

from __future__ import annotations

from collections.abc import Callable

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.matrix import Matrix, Release
from neuron_env.matrix.commands.indexcheck.companions import companion_facts
from neuron_env.matrix.commands.indexcheck.facts import (
    DEFAULT_INDEX,
    Fact,
    Listing,
    Status,
    is_placeholder,
    listed,
    listing,
    without_placeholders,
)
from neuron_env.matrix.commands.indexcheck.glibc import min_glibc_fact, os_facts
from neuron_env.matrix.commands.indexcheck.placeholders import placeholder_facts
from neuron_env.matrix.commands.indexcheck.simple import IndexReadout
from neuron_env.matrix.commands.indexcheck.sources import unsourced_facts
from neuron_env.matrix.commands.indexcheck.wheels import Wheel, python_sort_key
from neuron_env.matrix.model import Pairing, PipPackage


def verify_release(
    release: Release, matrix: Matrix, readouts: dict[str, IndexReadout]
) -> list[Fact]:
    """Every fact of ``release`` that the read indexes can speak to."""
    torch = listing(release, readouts, "torch")
    neuronx = listing(release, readouts, "torch-neuronx")
    facts: list[Fact] = []
    builds: list[tuple[Version | None, Version | None]] = []
    for i, pairing in enumerate(release.pairings):
        pair_facts, torch_build, neuronx_build = _pairing_facts(
            i, pairing, release, matrix, torch, neuronx
        )
        facts += pair_facts
        builds.append((torch_build, neuronx_build))
    known = (release, *matrix.releases)
    for name, package in release.packages.items():
        found = without_placeholders(listing(release, readouts, name), known)
        facts.append(_package_fact(name, package, found))
    newest_torch, newest_neuronx = builds[-1] if builds else (None, None)
    facts.append(_legacy_fact(release, neuronx))
    facts.append(min_glibc_fact(release, torch, newest_torch))
    facts += os_facts(release, neuronx, newest_neuronx)
    facts += placeholder_facts(release, readouts.get(DEFAULT_INDEX))
    facts += companion_facts(release, readouts, matrix.releases)
    facts += unsourced_facts(release)
    return facts


# --- pairings -----------------------------------------------------------------------------------


def _pairing_facts(
    i: int, p: Pairing, release: Release, matrix: Matrix, torch: Listing, neuronx: Listing
) -> tuple[list[Fact], Version | None, Version | None]:
    key, minor = f"pairings[{i}]", p.torch_minor
    same_minor = SpecifierSet(f"=={p.torch.major}.{p.torch.minor}.*")
    torch_fact = _pin_fact(
        f"pairing.{minor}.torch", f"{key}.torch", torch, SpecifierSet(p.torch_spec),
        str(p.torch), lambda: _public(torch.versions(same_minor)),
    )  # fmt: skip
    family_fact, family_value = _family_fact(i, p, release, matrix, neuronx)
    neuronx_fact = _pin_fact(
        f"pairing.{minor}.torch-neuronx", f"{key}.torch-neuronx", neuronx,
        SpecifierSet(p.torch_neuronx_spec), f"{p.torch_neuronx} (any build)", lambda: family_value,
    )  # fmt: skip
    torch_build = _newest_build(torch, p.torch_spec, torch_fact)
    chosen = family_value if family_fact.status == "contradicted" else p.torch_neuronx
    neuronx_build = _newest_build(neuronx, f"=={chosen}.*" if chosen else None, None)
    python_fact = _python_fact(i, p, torch, torch_build, neuronx, neuronx_build)
    return [torch_fact, neuronx_fact, family_fact, python_fact], torch_build, neuronx_build


def _pin_fact(
    fact_id: str,
    key: str,
    found: Listing,
    spec: SpecifierSet,
    shown: str,
    replacement: Callable[[], Version | None],
) -> Fact:
    subject = f"{found.package} {shown} is on the {found.index} index"
    if found.problem:
        return Fact(fact_id, key, subject, "unknown", shown, found.problem, found.index)
    matching = found.versions(spec)
    if matching:
        return Fact(fact_id, key, subject, "confirmed", shown, str(matching[0]), found.index)
    instead = replacement()
    text = listed(found) + (f"; its nearest is {instead}" if instead else "")
    return Fact(fact_id, key, subject, "contradicted", shown, text, found.index, instead)


def _family_fact(
    i: int, p: Pairing, release: Release, matrix: Matrix, neuronx: Listing
) -> tuple[Fact, Version | None]:
    pinned = p.torch_neuronx
    family = ".".join(map(str, pinned.release[:3]))
    fact_id, key = f"pairing.{p.torch_minor}.newest-build", f"pairings[{i}].torch-neuronx"
    subject = f"torch-neuronx {pinned} is the newest {family}.* build"

    def fact(status: Status, index: str, value: Version | None = None) -> Fact:
        return Fact(fact_id, key, subject, status, str(pinned), index, neuronx.index, value)

    if neuronx.problem:
        return fact("unknown", neuronx.problem), None
    builds = [
        v for v in neuronx.versions(SpecifierSet(f"=={family}.*"))
        if v not in release.legacy_xla.versions and not is_placeholder(release, "torch-neuronx", v)
    ]  # fmt: skip
    if not builds:
        return fact("contradicted", f"no {family}.* build; {listed(neuronx)}"), None
    newest = _truncate(builds[0], len(pinned.release))
    if newest == pinned:
        return fact("confirmed", f"{newest} (newest build {builds[0]})"), pinned
    later = _release_naming(matrix, release, newest)
    if newest > pinned and later:
        return fact("confirmed", f"{pinned}; the newer {newest} is Neuron {later}'s"), pinned
    return fact("contradicted", f"{newest} (build {builds[0]})", newest), newest


def _python_fact(
    i: int,
    p: Pairing,
    torch: Listing,
    torch_build: Version | None,
    neuronx: Listing,
    neuronx_build: Version | None,
) -> Fact:
    claimed = ", ".join(p.python)
    fact_id, key = f"pairing.{p.torch_minor}.python", f"pairings[{i}].python"
    subject = f"Python {claimed} have wheels of torch {p.torch_minor} and its torch-neuronx"
    seen: list[tuple[str, frozenset[str] | None]] = []
    unknown: list[str] = []
    for found, build in ((torch, torch_build), (neuronx, neuronx_build)):
        if found.problem or build is None:
            unknown.append(found.problem or f"no {found.package} build to look at")
            continue
        seen.append((f"{found.package} {build}", _union_pythons(found.build(build))))
    shown = "; ".join(f"{name}: {_python_list(pys)}" for name, pys in seen)
    have = _intersect([pys for _, pys in seen])
    value = tuple(sorted(have, key=python_sort_key)) if have is not None else None
    missing = have is not None and not set(p.python) <= have
    if unknown and not missing:
        return Fact(fact_id, key, subject, "unknown", claimed, "; ".join(unknown), neuronx.index)
    if have is None or have == set(p.python):
        return Fact(fact_id, key, subject, "confirmed", claimed, shown, neuronx.index)
    # Wheels missing for a claimed Python, or wheels for a Python the file does not list.
    return Fact(fact_id, key, subject, "contradicted", claimed, shown, neuronx.index, value)


# --- packages and the legacy line ------------------------------------------------------------


def _package_fact(name: str, package: PipPackage, found: Listing) -> Fact:
    shown = package.requirement_spec
    fact_id, key = f"package.{name}", f'packages."{name}"' if "." in name else f"packages.{name}"
    subject = f"{name} {shown} is on the {found.index} index"
    if found.problem:
        return Fact(fact_id, key, subject, "unknown", shown, found.problem, found.index)
    spec = SpecifierSet(shown)
    matching = found.versions(spec)
    if package.version is not None and matching:
        return Fact(fact_id, key, subject, "confirmed", shown, str(matching[0]), found.index)
    if matching:
        text = (
            f"newest matching {matching[0]}; the index cannot tell which build belongs to the "
            "release"
        )
        return Fact(fact_id, key, subject, "unknown", shown, text, found.index)
    everything = found.versions()
    same_major = [v for v in everything if package.version and v.major == package.version.major]
    instead = (same_major or everything)[0] if everything else None
    text = f"none matching {shown}; {listed(found)}" if everything else listed(found)
    return Fact(fact_id, key, subject, "contradicted", shown, text, found.index, instead, True)


def _legacy_fact(release: Release, neuronx: Listing) -> Fact:
    """The newest build of the legacy PyTorch/XLA torch-neuronx line (same name, other product)."""
    legacy = release.legacy_xla
    subject = f"{legacy.last} is the newest legacy PyTorch/XLA torch-neuronx build"
    args = (
        "legacy-xla.last",
        "legacy-xla.last",
        subject,
    )
    if neuronx.problem:
        return Fact(*args, "unknown", str(legacy.last), neuronx.problem, neuronx.index)
    builds = [
        v for v in neuronx.versions(legacy.versions)
        if not is_placeholder(release, "torch-neuronx", v)
    ]  # fmt: skip
    if builds and builds[0] == legacy.last:
        return Fact(*args, "confirmed", str(legacy.last), str(builds[0]), neuronx.index)
    shown = str(builds[0]) if builds else f"no build in {legacy.versions}"
    value = builds[0] if builds else None
    return Fact(*args, "contradicted", str(legacy.last), shown, neuronx.index, value)


# --- helpers ------------------------------------------------------------------------------------


def _newest_build(found: Listing, spec: str | None, pin: Fact | None) -> Version | None:
    if found.problem or spec is None:
        return None
    matching = found.versions(SpecifierSet(spec))
    if matching:
        return matching[0]
    if pin is not None and isinstance(pin.value, Version):
        nearest = found.versions(SpecifierSet(f"=={pin.value}"))
        return nearest[0] if nearest else None
    return None


def _union_pythons(wheels: list[Wheel]) -> frozenset[str] | None:
    if any(w.pythons is None for w in wheels):
        return None
    return frozenset().union(*(w.pythons for w in wheels if w.pythons is not None))


def _intersect(sets: list[frozenset[str] | None]) -> set[str] | None:
    known = [s for s in sets if s is not None]
    if not known:
        return None
    return set.intersection(*(set(s) for s in known))


def _python_list(pythons: frozenset[str] | None) -> str:
    if pythons is None:
        return "any Python 3"
    return ", ".join(sorted(pythons, key=python_sort_key)) or "none"


def _public(versions: list[Version]) -> Version | None:
    return Version(versions[0].public) if versions else None


def _truncate(version: Version, parts: int) -> Version:
    return Version(".".join(map(str, version.release[:parts])))


def _release_naming(matrix: Matrix, release: Release, torch_neuronx: Version) -> str | None:
    for other in matrix.releases:
        if other.version > release.version and any(
            p.torch_neuronx == torch_neuronx for p in other.pairings
        ):
            return str(other.version)
    return None
