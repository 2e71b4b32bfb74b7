"""Telling a default-index placeholder from the real Neuron package, from its metadata alone.

Most placeholders cannot be caught by importing them: many ship a folder that is not a module
name (``neuronx-cc/``), and most have an empty Summary with "WRONG PACKAGE" only in the
description. So a Neuron-named distribution is a placeholder when the matrix lists its version,
when its metadata says "WRONG PACKAGE", or when it has the placeholder shape: Amazon as author, a
"Proprietary" license, and one small ``__init__.py`` that raises as its only file.
"""

from __future__ import annotations

from collections.abc import Iterable

from neuron_env.checks.versions import loose_version
from neuron_env.facts import Distribution
from neuron_env.matrix.model import Release
from neuron_env.matrix.names import is_neuron_name, known_neuron_names

WRONG_PACKAGE = "WRONG PACKAGE"


def placeholder_reason(name: str, dist: Distribution, releases: Iterable[Release]) -> str:
    """Why ``dist`` is a placeholder, or "" when it is not one."""
    releases = tuple(releases)
    if not is_neuron_name(name, known_neuron_names(releases)):
        return ""
    version = loose_version(dist.version)
    for release in releases:
        known = release.placeholders.get(name)
        if known is not None and version is not None and version in known.versions:
            return known.note or f"{name} {dist.version} is a known placeholder version"
    if WRONG_PACKAGE in dist.summary or WRONG_PACKAGE in dist.description:
        return f"its description says '{WRONG_PACKAGE}'"
    if dist.stub and "amazon" in dist.author.lower() and "proprietary" in dist.license.lower():
        return "an Amazon 'Proprietary' package whose only file is an __init__.py that raises"
    return ""


def is_placeholder(name: str, dist: Distribution, releases: Iterable[Release]) -> bool:
    return bool(placeholder_reason(name, dist, releases))
