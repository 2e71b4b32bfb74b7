"""The placeholders' versions on the default index (pure).

Each Neuron name on the default index should list only the "WRONG PACKAGE" placeholder versions
the release file names. A version that the release's own pin would accept, or that lies above
it (an unpinned install would take it over the real build), is an impostor in the making: it is
reported, and never written into an overlay as a placeholder.
"""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.matrix import Release
from neuron_env.matrix.commands.indexcheck.facts import DEFAULT_INDEX, Fact
from neuron_env.matrix.commands.indexcheck.simple import IndexReadout
from neuron_env.matrix.commands.indexcheck.wheels import listed_versions


def placeholder_facts(release: Release, readout: IndexReadout | None) -> list[Fact]:
    """The placeholder versions each Neuron name has on the default index, when it is read."""
    if readout is None:
        return []  # no default index configured: nothing to say (the report says so)
    facts = []
    for name, placeholder in release.placeholders.items():
        key = f'placeholders."{name}"' if "." in name else f"placeholders.{name}"
        listed = ", ".join(map(str, placeholder.versions))
        subject = f"{name} on the default index is only the placeholder {listed}"
        args = (f"placeholder.{name}", key, subject)
        if not readout.readable:
            facts.append(
                Fact(*args, "unknown", listed, "the default index could not be read", DEFAULT_INDEX)
            )
            continue
        page = readout.page(name)
        versions = listed_versions(page) if page is not None and page.found else []
        risky = [v for v in versions if _accepted_by_release(release, name, v)]
        shown = ", ".join(map(str, versions)) or f"no {name}"
        if risky:
            risky_text = ", ".join(map(str, risky))
            shown += f" ({risky_text} passes or tops the release's own pin: an impostor?)"
        if set(versions) == set(placeholder.versions):
            facts.append(Fact(*args, "confirmed", listed, shown, DEFAULT_INDEX))
            continue
        value = tuple(v for v in versions if v not in risky) or None
        facts.append(Fact(*args, "contradicted", listed, shown, DEFAULT_INDEX, value))
    return facts


def _accepted_by_release(release: Release, name: str, version: Version) -> bool:
    """Whether the release's own pin for ``name`` accepts ``version`` (a real build, or worse),
    or ``version`` lies above its exact pins (the pins are bounded, an impostor is not)."""
    specs = [release.packages[name].requirement_spec] if name in release.packages else []
    pinned = [release.packages[name].version] if name in release.packages else []
    if name == "torch-neuronx":
        specs += [p.torch_neuronx_spec for p in release.pairings]
        pinned += [p.torch_neuronx for p in release.pairings]
    if name == "torch":
        specs += [p.torch_spec for p in release.pairings]
        pinned += [p.torch for p in release.pairings]
    above = any(pin is not None and version > pin for pin in pinned)
    return above or any(SpecifierSet(spec).contains(version, prereleases=True) for spec in specs)
