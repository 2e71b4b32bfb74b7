"""What ``matrix verify`` says about each fact, and what one index lists for one package."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, Literal

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.frozen import frozen
from neuron_env.matrix import Release
from neuron_env.matrix.commands.indexcheck.simple import IndexReadout
from neuron_env.matrix.commands.indexcheck.wheels import Wheel, wheels_for
from neuron_env.matrix.names import is_placeholder_version

Status = Literal["confirmed", "contradicted", "unknown"]

#: The name under which the default index (pip's ``index-url``) is read, for the placeholders.
DEFAULT_INDEX = "default"


@frozen
class Fact:
    """One statement of the release file and what the index says about it.

    ``key`` locates the statement in the file (``pairings[0].torch-neuronx``); ``value`` is the
    index's answer in the file's own type, which ``--write`` puts in its place when contradicted.
    ``guess`` marks a value that exists on the index but that the index cannot tie to the release.
    """

    id: str
    key: str
    subject: str
    status: Status
    file_says: str
    index_shows: str
    index: str | None
    value: Any = None
    guess: bool = False


@frozen
class Listing:
    """The wheels one index lists for one package, or why nothing can be said about them."""

    package: str
    index: str | None
    wheels: tuple[Wheel, ...] = ()
    problem: str | None = None
    hidden: int = 0
    """Wheels left out as known placeholders (:func:`without_placeholders`)."""

    def versions(self, spec: SpecifierSet | None = None) -> list[Version]:
        """Versions with a wheel (yanked files left out), newest first.

        Pre-releases only when nothing else matches, as pip chooses.
        """
        found = {w.version for w in self.wheels if not w.yanked}
        return sorted((spec or SpecifierSet()).filter(found), reverse=True)

    def build(self, version: Version) -> list[Wheel]:
        return [w for w in self.wheels if w.version == version and not w.yanked]


def listing(release: Release, readouts: dict[str, IndexReadout], package: str) -> Listing:
    index = release.index_for(package)
    if index is None and package in release.companions:
        index = release.companions[package].index
    readout = readouts.get(index or "")
    if index is None or readout is None:
        return Listing(package, index, problem="no index of the matrix serves it")
    if not readout.readable:
        return Listing(package, index, problem=f"the {index} index could not be read")
    page = readout.page(package)
    if page is None or not page.found:
        return Listing(package, index)
    arch = release.release.arch[0] if release.release.arch else "x86_64"
    return Listing(package, index, tuple(wheels_for(page, arch)))


def without_placeholders(found: Listing, releases: Iterable[Release]) -> Listing:
    """``found`` less the "WRONG PACKAGE" versions any release lists for its package: an index
    that shows only those has nothing to offer, and ``--write`` must never pin one."""
    kept = tuple(
        w for w in found.wheels if not is_placeholder_version(found.package, w.version, releases)
    )
    if len(kept) == len(found.wheels):
        return found
    return dataclasses.replace(found, wheels=kept, hidden=len(found.wheels) - len(kept))


def listed(found: Listing) -> str:
    versions = found.versions()
    if found.hidden and not versions:
        return f"the {found.index} index lists only 'WRONG PACKAGE' placeholders of {found.package}"
    if not found.wheels and not versions:
        return f"the {found.index} index lists no {found.package} wheel"
    shown = ", ".join(map(str, versions[:4])) + (", ..." if len(versions) > 4 else "")
    return f"the {found.index} index has {shown}"


def is_placeholder(release: Release, package: str, version: Version) -> bool:
    placeholder = release.placeholders.get(package)
    return placeholder is not None and version in placeholder.versions
