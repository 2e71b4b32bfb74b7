"""Which package names are Neuron's: the one rule every command plans, renders and judges by.

A name is a Neuron name when a release routes it (its indexes serve it; the PyTorch index's
``torch`` is PyTorch's, not Neuron's), lists it as a placeholder or a companion, or when it looks
like one: it contains ``neuron`` or starts with ``nki``, ``nrt``, ``aws-neuron`` or ``libneuron``.
The patterns matter for names no release file knows yet (``neuron-cc``, ``nkipy``, ``nrtpy``,
``nki_foo``): AWS publishes under them, and placeholders and impostors squat on them on the
default index. A Neuron name may come from the Neuron index alone, at the release's pin.

Pure: names in, answers out (canonical names, as pip compares them).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import lru_cache
from typing import Literal

from packaging.version import InvalidVersion, Version

from neuron_env.matrix.model import Release

#: The name patterns, decided once: a canonical name containing ``neuron`` or starting so.
NEURON_WORD = "neuron"
NEURON_PREFIXES = ("nki", "nrt", "aws-neuron", "libneuron")
#: PyTorch's own package, served by the PyTorch index a release routes: never a Neuron name.
PYTORCH = "torch"

NeuronKind = Literal["routed", "companion", "placeholder", "pattern"]


@lru_cache(maxsize=4096)  # the same few hundred names, asked for per check and per host
def canonical(name: str) -> str:
    """``nki-foo`` for ``NKI_Foo``: names compare as pip compares them.

    ``packaging.utils.canonicalize_name``'s rule (PEP 503), written out: importing that module
    imports ``packaging.tags`` (sysconfig, the manylinux and musllinux probes), which a doctor run
    does not otherwise need.
    """
    value = name.lower().replace("_", "-").replace(".", "-")
    while "--" in value:
        value = value.replace("--", "-")
    return value


def looks_neuron(name: str) -> bool:
    """Whether ``name`` matches the Neuron name patterns."""
    name = canonical(name)
    return NEURON_WORD in name or name.startswith(NEURON_PREFIXES)


#: Each release's names, worked out once per loaded release (by identity: a release is frozen, and
#: held here so that its id is not reused); ``fleet report`` asks for them per check and per host.
_NAMES_OF: dict[int, tuple[Release, frozenset[str]]] = {}
_KNOWN_OF: dict[tuple[int, ...], tuple[tuple[Release, ...], frozenset[str]]] = {}


def release_neuron_names(release: Release) -> frozenset[str]:
    """The Neuron names ``release`` itself knows: routed, placeholders and companions."""
    known = _NAMES_OF.get(id(release))
    if known is not None and known[0] is release:
        return known[1]
    served = {n for ix in release.indexes.values() for n in ix.serves if canonical(n) != PYTORCH}
    names = frozenset(canonical(n) for n in (*served, *release.placeholders, *release.companions))
    _NAMES_OF[id(release)] = (release, names)
    return names


def known_neuron_names(releases: Iterable[Release]) -> frozenset[str]:
    """The Neuron names of every release given."""
    releases = tuple(releases)
    key = tuple(map(id, releases))  # the same few loaded releases, asked for per check and host
    known = _KNOWN_OF.get(key)
    if known is not None and all(a is b for a, b in zip(known[0], releases, strict=True)):
        return known[1]
    names = frozenset(n for release in releases for n in release_neuron_names(release))
    _KNOWN_OF[key] = (releases, names)
    return names


def is_neuron_name(name: str, known: Collection[str] = ()) -> bool:
    """THE rule: a name the releases know as Neuron's (``known``, canonical) or that looks so."""
    name = canonical(name)
    return name != PYTORCH and (name in known or looks_neuron(name))


DEVICE_UPSTREAM = frozenset({"torch", "torchvision", "torchaudio", "torch-xla"})
"""Upstream names whose copy decides what a TorchNeuron script runs on the device, besides the
Neuron names (jax is another framework: its copy decides nothing ``import torch`` runs)."""


def decides_the_device(name: str, known: Collection[str] = ()) -> bool:
    """A Neuron name (:func:`is_neuron_name`) or one of :data:`DEVICE_UPSTREAM`: a package whose
    wrong copy changes what ``import torch`` runs on the device."""
    return name in DEVICE_UPSTREAM or is_neuron_name(name, known)


def neuron_kind(name: str, release: Release) -> NeuronKind | None:
    """Why ``name`` is a Neuron name for ``release`` (None: it is not one), the first that holds."""
    name = canonical(name)
    if name == PYTORCH:
        return None
    if release.index_for(name) is not None:
        return "routed"
    if name in release.companions:
        return "companion"
    if name in release.placeholders:
        return "placeholder"
    return "pattern" if looks_neuron(name) else None


def pattern_shown(name: str) -> str:
    """The pattern ``name`` matches, as a user reads it (``nki*``, ``*neuron*``)."""
    name = canonical(name)
    prefix = next((p for p in NEURON_PREFIXES if name.startswith(p)), None)
    return f"{prefix}*" if prefix else f"*{NEURON_WORD}*"


def placeholder_versions(name: str, releases: Iterable[Release]) -> frozenset[Version]:
    """Every "WRONG PACKAGE" version any release lists for ``name`` on the default index."""
    name = canonical(name)
    return frozenset(
        v for r in releases for n, ph in r.placeholders.items() if canonical(n) == name
        for v in ph.versions
    )  # fmt: skip


def is_placeholder_version(name: str, version: str | Version, releases: Iterable[Release]) -> bool:
    """Whether ``name`` at ``version`` is a placeholder some release lists."""
    try:
        parsed = version if isinstance(version, Version) else Version(version)
    except InvalidVersion:
        return False
    return parsed in placeholder_versions(name, releases)
