"""What a wheel's file name says: its version, the CPython versions and the glibc it needs.

``torch_neuronx-2.14.3.1-cp312-cp312-manylinux_2_35_x86_64.whl`` is a build of 2.14.3.1 for
CPython 3.12 that pip installs on an x86_64 host with glibc 2.35 or newer
(``packaging.utils.parse_wheel_filename`` reads it).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from packaging.tags import Tag
from packaging.utils import (
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from neuron_env.frozen import frozen
from neuron_env.matrix.commands.indexcheck.simple import ProjectPage

#: The old manylinux names and the glibc each stands for (PEP 600).
LEGACY_MANYLINUX = {"manylinux1": (2, 5), "manylinux2010": (2, 12), "manylinux2014": (2, 17)}
#: Tags with numbers no real wheel has (``cp3x``, a 5,000-digit glibc) match neither pattern: pip
#: installs such a wheel on no host, so it is left out like a file of another platform.
_MANYLINUX = re.compile(r"^manylinux_(\d{1,4})_(\d{1,4})_(.+)$")
_CPYTHON3 = re.compile(r"^cp3(\d{1,3})$")
#: CPython minors a stable-ABI (abi3) wheel is assumed to cover, from its own minor upwards.
_LAST_MINOR = 30
MAX_FILENAME = 255  # the longest file name Linux file systems allow


@frozen
class Wheel:
    """One wheel file for the architecture being checked.

    ``pythons`` is None for a wheel any Python 3 installs (``py3-none``); ``glibc`` is None when
    the wheel needs no particular glibc (``any``), and ``(0, 0)`` when its tag does not say
    (a bare ``linux_x86_64`` tag).
    """

    filename: str
    version: Version
    pythons: frozenset[str] | None
    glibc: tuple[int, int] | None
    yanked: bool = False


def wheels_for(page: ProjectPage | None, arch: str) -> list[Wheel]:
    """The page's wheels that a Linux ``arch`` host could install; other files are left out."""
    if page is None:
        return []
    wanted = canonicalize_name(page.project)
    found = []
    for entry in page.files:
        try:
            name, version, _, tags = _parse_wheel(entry.filename)
        except ValueError:  # InvalidWheelFilename, InvalidVersion, a 5,000-digit number
            continue  # an sdist or a stray file: neuron-env installs wheels only
        usable = [tag for tag in tags if _for_arch(tag.platform, arch)]
        if name != wanted or not usable:
            continue
        needs = [_platform_glibc(tag.platform) for tag in usable]
        glibc = None if None in needs else min(n for n in needs if n is not None)
        found.append(Wheel(entry.filename, version, _pythons(usable), glibc, entry.yanked))
    return found


def _for_arch(platform: str, arch: str) -> bool:
    if platform == "any":
        return True
    match = _MANYLINUX.match(platform)
    if match:
        return match[3] == arch
    legacy, _, tag_arch = platform.partition("_")
    return (legacy in LEGACY_MANYLINUX and tag_arch == arch) or platform == f"linux_{arch}"


def _platform_glibc(platform: str) -> tuple[int, int] | None:
    """The glibc a platform tag of the right architecture needs; None for ``any``."""
    if platform == "any":
        return None
    match = _MANYLINUX.match(platform)
    if match:
        return int(match[1]), int(match[2])
    legacy = platform.partition("_")[0]
    return LEGACY_MANYLINUX.get(legacy, (0, 0))  # a bare linux_<arch> tag does not say


def _pythons(tags: Iterable[Tag]) -> frozenset[str] | None:
    minors: set[str] = set()
    for tag in tags:
        interpreter, abi = tag.interpreter, tag.abi
        if interpreter.startswith("py3") and abi == "none":
            return None
        cpython = _CPYTHON3.match(interpreter)
        if cpython is None or abi.endswith("t"):
            continue  # another implementation, a free-threaded-only build, or an odd tag
        minor = int(cpython[1])
        last = _LAST_MINOR if abi == "abi3" else minor
        minors.update(f"3.{m}" for m in range(minor, last + 1))
    return frozenset(minors)


def glibc_text(glibc: tuple[int, int]) -> str:
    return f"{glibc[0]}.{glibc[1]}"


def python_sort_key(python: str) -> tuple[int, ...]:
    return tuple(int(part) for part in python.split("."))


def listed_versions(page: ProjectPage | None) -> list[Version]:
    """Every version a page lists a file for (wheel or sdist, yanked left out), newest first."""
    if page is None:
        return []
    wanted = canonicalize_name(page.project)
    found: set[Version] = set()
    for entry in page.files:
        parsed = _name_and_version(entry.filename)
        if parsed is not None and parsed[0] == wanted and not entry.yanked:
            found.add(parsed[1])
    return sorted(found, reverse=True)


def _name_and_version(filename: str) -> tuple[str, Version] | None:
    try:
        name, version, *_ = _parse_wheel(filename)
        return name, version
    except ValueError:
        pass
    try:
        return parse_sdist_filename(filename)
    except ValueError:  # InvalidSdistFilename, InvalidVersion, a 5,000-digit number
        return None


def _parse_wheel(filename: str) -> tuple[str, Version, object, frozenset[Tag]]:
    """``parse_wheel_filename``, refusing a name no file system holds (a page's stray text)."""
    if len(filename) > MAX_FILENAME:
        raise InvalidWheelFilename(f"a file name of {len(filename):,} characters")
    return parse_wheel_filename(filename)
