"""Version comparisons for installed packages, whose version strings are not always PEP 440."""

from __future__ import annotations

import re
from functools import lru_cache

from packaging.version import InvalidVersion, Version

_LEADING = re.compile(r"\d+(?:\.\d+)*")


@lru_cache(maxsize=4096)  # the same versions, judged per check and per host (fleet report)
def loose_version(text: str | None) -> Version | None:
    """``2.31.7.0`` from ``2.31.7.0-1ubuntu1`` or ``2.14.0+cpu``; None when there is no number."""
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        match = _LEADING.match(text.strip())
        return Version(match.group(0)) if match else None


@lru_cache(maxsize=4096)
def package_version(text: str | None) -> Version | None:
    """A Python distribution's version, strictly PEP 440 (pip installs nothing else): a forged
    ``2.14.0\n::error::x`` from a snapshot is no version at all, not 2.14.0."""
    if not text:
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


def same_release_line(installed: Version, family: Version) -> bool:
    """True when ``installed`` (2.14.3.0.12345) belongs to the family ``family`` (2.14.3.0)."""
    return installed.release[: len(family.release)] == family.release


def older(installed: Version, wanted: Version) -> bool:
    """Compare only as many parts as ``wanted`` has: 2.31.7.0.123 is not older than 2.31.7.0."""
    return installed.release[: len(wanted.release)] < wanted.release
