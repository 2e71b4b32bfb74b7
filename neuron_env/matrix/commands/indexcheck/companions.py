"""The companions' versions on their index (pure).

A companion (TorchTitan Neuron, TorchAO Neuron) is pinned exactly, so its index can confirm the
pin or contradict it; a bounded range stays unknown, since the index cannot tell which build is
the release's. ``--write`` treats them as it treats ``[packages]`` (see :mod:`.overlay`).
"""

from __future__ import annotations

from collections.abc import Iterable

from packaging.specifiers import SpecifierSet

from neuron_env.matrix import Release
from neuron_env.matrix.commands.indexcheck.facts import Fact, listed, listing, without_placeholders
from neuron_env.matrix.commands.indexcheck.simple import IndexReadout


def companion_facts(
    release: Release, readouts: dict[str, IndexReadout], known: Iterable[Release] = ()
) -> list[Fact]:
    """One fact per companion: its pinned version is (or is not) on its index.

    ``known``: the matrix's releases, whose placeholders are never taken for a companion's
    version (a release file may lack the row another one has).
    """
    facts = []
    for name, companion in release.companions.items():
        found = without_placeholders(listing(release, readouts, name), (release, *known))
        shown = companion.requirement_spec
        key = f'companions."{name}"' if "." in name else f"companions.{name}"
        args = (f"companion.{name}", key, f"{name} {shown} is on the {found.index} index")
        if found.problem:
            facts.append(Fact(*args, "unknown", shown, found.problem, found.index))
            continue
        matching = found.versions(SpecifierSet(shown))
        if matching and companion.version is not None:
            facts.append(Fact(*args, "confirmed", shown, str(matching[0]), found.index))
        elif matching:
            text = f"newest matching {matching[0]}; the index cannot tell which is the release's"
            facts.append(Fact(*args, "unknown", shown, text, found.index))
        else:
            newest = found.versions()
            value = newest[0] if newest else None
            facts.append(
                Fact(*args, "contradicted", shown, listed(found), found.index, value, True)
            )
    return facts
