"""The glibc the wheels need, against the release's ``min-glibc`` and its OS rows (pure).

A ``manylinux_2_35_x86_64`` wheel installs where glibc is 2.35 or newer; the OS rows say whether
a release has pip wheels for that OS, so the floor of the torch-neuronx wheels confirms or
contradicts each row, and the floor of the torch wheels the release's ``min-glibc``.
"""

from __future__ import annotations

from packaging.version import Version

from neuron_env.matrix import Release
from neuron_env.matrix.commands.indexcheck.facts import Fact, Listing, Status
from neuron_env.matrix.commands.indexcheck.wheels import glibc_text

#: glibc of each OS release the matrix files name; an OS not listed here is left unknown.
OS_GLIBC: dict[str, tuple[int, int]] = {
    "amzn-2023": (2, 34),
    "ubuntu-22.04": (2, 35),
    "ubuntu-24.04": (2, 39),
    "ubuntu-26.04": (2, 42),  # at least: the glibc of Ubuntu 25.10, the release before it
}
_AT_LEAST = {"ubuntu-26.04"}


def min_glibc_fact(release: Release, torch: Listing, build: Version | None) -> Fact:
    stated = release.release.min_glibc
    subject = f"PyTorch wheels need glibc {stated}" if stated else "PyTorch wheels' glibc floor"
    args = ("release.min-glibc", "release.min-glibc", subject)
    floor, problem = _floor(torch, build)
    if floor is None:
        return Fact(*args, "unknown", stated or "(not stated)", problem, torch.index)
    text = f"glibc {glibc_text(floor)} (torch {build})"
    if stated == glibc_text(floor):
        return Fact(*args, "confirmed", stated, text, torch.index)
    value = glibc_text(floor)
    return Fact(*args, "contradicted", stated or "(not stated)", text, torch.index, value)


def os_facts(release: Release, neuronx: Listing, build: Version | None) -> list[Fact]:
    floor, problem = _floor(neuronx, build)
    facts = []
    for os_id, entry in release.os.items():
        key = f'os."{os_id}".wheels' if "." in os_id else f"os.{os_id}.wheels"
        said = "pip wheels" if entry.wheels else "no pip wheels"
        subject = f"{entry.name} has {said} of torch-neuronx"
        args = (f"os.{os_id}.wheels", key, subject)
        glibc = OS_GLIBC.get(os_id)
        if floor is None or glibc is None:
            why = problem if floor is None else f"neuron-env does not know the glibc of {os_id}"
            facts.append(Fact(*args, "unknown", said, why, neuronx.index))
            continue
        installs = glibc >= floor
        plus = "+" if os_id in _AT_LEAST else ""
        text = (
            f"torch-neuronx {build} needs glibc {glibc_text(floor)}, {entry.name} has "
            f"{glibc_text(glibc)}{plus}: the wheels {'install' if installs else 'do not install'}"
        )
        status: Status = "confirmed" if installs == entry.wheels else "contradicted"
        value = None if status == "confirmed" else installs
        facts.append(Fact(*args, status, said, text, neuronx.index, value))
    return facts


def _floor(found: Listing, build: Version | None) -> tuple[tuple[int, int] | None, str]:
    """The lowest glibc any wheel of ``build`` installs on, or None and why not."""
    if found.problem or build is None:
        return None, found.problem or f"no {found.package} build to look at"
    needs = [w.glibc for w in found.build(build)]
    if None in needs:
        return None, f"{found.package} {build} has a wheel for any platform"
    known = [n for n in needs if n is not None and n != (0, 0)]
    if not known:
        return None, f"the {found.package} {build} wheels' platform tags name no glibc"
    return min(known), ""
