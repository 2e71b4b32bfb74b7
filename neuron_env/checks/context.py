"""Choosing what to judge a host against: the Neuron release and the PyTorch pairing.

``--release`` and ``--torch`` win. Otherwise the release is the newest one consistent with what
is installed (torch-neuronx family, system package versions) among the releases that pair the
installed (or requested) PyTorch, and the pairing is the installed torch's; with nothing
installed, the latest release.
"""

from __future__ import annotations

import shlex

from neuron_env.checks.legacy_host import legacy_family
from neuron_env.checks.model import NEW_ENV, Context
from neuron_env.checks.placeholders import is_placeholder
from neuron_env.checks.versions import loose_version, same_release_line
from neuron_env.errors import UnsupportedCombination
from neuron_env.facts import HostFacts, PythonFacts
from neuron_env.invocation import program
from neuron_env.matrix import Matrix, Release
from neuron_env.matrix.model import Pairing
from neuron_env.wording import join_words

OWN_DISTRIBUTION = "neuron-env"


def build_context(
    matrix: Matrix, facts: HostFacts, *, release: str | None = None, torch: str | None = None
) -> Context:
    """The release and pairing to judge ``facts`` against, with the reasons for the choice."""
    chosen, release_reason = _release(matrix, facts, release, torch)
    pairing, torch_reason = _pairing(matrix, chosen, facts, torch, requested=release is not None)
    python = facts.python
    return Context(
        chosen,
        release_reason,
        pairing,
        torch_reason,
        _fix_target(python),
        requested=release is not None,
        known=matrix.releases,
        new_env=_needs_new_env(python, pairing or chosen.pairings[-1]),
        program=program(),
        python=shlex.quote(python.executable) if python else "",
        has_pip=python is None or "pip" in python.distributions,
        unlisted_os=unlisted_os(facts, chosen),
        legacy_family=legacy_family(facts, chosen),
    )


def unlisted_os(facts: HostFacts, release: Release) -> str:
    """The host's OS name when ``release`` lists OS releases but not this one, else ""."""
    os_facts = facts.os
    if os_facts is None or not os_facts.key or not release.os or os_facts.key in release.os:
        return ""
    return os_facts.pretty_name or os_facts.key


def _release(
    matrix: Matrix, facts: HostFacts, requested: str | None, torch: str | None
) -> tuple[Release, str]:
    if requested is not None:
        return matrix.get(requested), "requested with --release"
    candidates, pairs = _pairing_releases(matrix, facts, torch)
    newest = candidates[-1]
    evidence = installed_evidence(facts, matrix.releases)
    if not evidence:
        return newest, pairs or "the latest; nothing installed to detect a release from"
    scored = [(_agreement(r, evidence), r.version, r) for r in candidates]
    best_score = max(score for score, _, _ in scored)
    if best_score == 0:
        why = "installed versions match no known release"
        return newest, f"{pairs}; {why}" if pairs else f"the latest; {why}"
    best = max((s for s in scored if s[0] == best_score), key=lambda s: s[1])[2]
    shown = [f"{name} {version}" for name, version in list(evidence.items())[:2]]
    more = f" and {len(evidence) - 2} more package versions" if len(evidence) > 2 else ""
    return best, f"detected from {', '.join(shown)}{more}"


def _pairing_releases(
    matrix: Matrix, facts: HostFacts, torch: str | None
) -> tuple[tuple[Release, ...], str]:
    """The releases that pair the requested or installed PyTorch, and a reason when that list
    leaves out newer releases (a torch 2.13 environment is judged against 2.33.1, not 2.34.0)."""
    minor, where = _torch_minor(facts, torch)
    pairing = tuple(r for r in matrix.releases if minor and r.pairing_for(minor))
    if not pairing:
        return matrix.releases, ""
    latest = matrix.latest()
    if pairing[-1] is latest:
        return pairing, ""
    pairs = join_words([p.torch_minor for p in latest.pairings])
    return pairing, (
        f"the newest release that pairs {where}; {latest.version} pairs PyTorch {pairs} only"
    )


def _torch_minor(facts: HostFacts, torch: str | None) -> tuple[str | None, str]:
    if torch is not None:
        version = loose_version(torch)
        minor = f"{version.major}.{version.minor}" if version else None
        return minor, f"PyTorch {minor} (--torch)"
    installed = facts.python.dist("torch") if facts.python else None
    version = loose_version(installed.version) if installed else None
    if installed is None or version is None:
        return None, ""
    return f"{version.major}.{version.minor}", f"the installed torch {installed.version}"


def installed_evidence(facts: HostFacts, releases: tuple[Release, ...] = ()) -> dict[str, str]:
    """Installed versions that identify a release: torch-neuronx and the apt packages.

    A placeholder's, a legacy XLA build's or an unknown family's torch-neuronx says nothing
    about the release, so it is never evidence.
    """
    evidence: dict[str, str] = {}
    if facts.python and (dist := facts.python.dist("torch-neuronx")):
        version = loose_version(dist.version)
        known = version is not None and any(
            same_release_line(version, p.torch_neuronx) for r in releases for p in r.pairings
        )
        if (known or not releases) and not is_placeholder("torch-neuronx", dist, releases):
            evidence["torch-neuronx"] = dist.version
    packages = facts.system.packages if facts.system else {}
    # The driver first: it says the most about which release a host was set up for.
    for name in sorted(packages, key=lambda n: (n != "aws-neuronx-dkms", n)):
        if name.startswith("aws-neuronx-"):
            evidence[name] = packages[name]
    return evidence


def _agreement(release: Release, evidence: dict[str, str]) -> int:
    score = 0
    for name, version in evidence.items():
        installed = loose_version(version)
        if installed is None:
            continue
        if name == "torch-neuronx":
            score += 2 * any(
                same_release_line(installed, p.torch_neuronx) for p in release.pairings
            )
        elif (pkg := release.system_packages.get(name)) and pkg.version is not None:
            score += installed.release[: len(pkg.version.release)] == pkg.version.release
    return score


def _pairing(
    matrix: Matrix, release: Release, facts: HostFacts, torch: str | None, *, requested: bool
) -> tuple[Pairing | None, str]:
    if torch is not None:
        minor = ".".join(torch.split(".")[:2])
        pairing = release.pairing_for(minor)
        if pairing is None:
            raise _unpaired(matrix, release, minor, requested)
        return pairing, "requested with --torch"
    installed = facts.python.dist("torch") if facts.python else None
    version = loose_version(installed.version) if installed else None
    if version is None:
        return None, "no torch installed"
    pairing = release.pairing_for(f"{version.major}.{version.minor}")
    return pairing, f"the installed torch {installed.version if installed else ''}".strip()


def _unpaired(
    matrix: Matrix, release: Release, minor: str, requested: bool
) -> UnsupportedCombination:
    supported = " and ".join(p.torch_minor for p in release.pairings)
    elsewhere = [str(r.version) for r in matrix.releases if r.pairing_for(minor)]
    if elsewhere and requested:
        hint = (
            f"PyTorch {minor} is paired in Neuron {join_words(elsewhere)}: "
            f"use --release {elsewhere[-1]}."
        )
    else:
        every = sorted({p.torch_minor for r in matrix.releases for p in r.pairings})
        hint = f"Pick one of {join_words(every)} with --torch."
    return UnsupportedCombination(
        f"Neuron {release.version} pairs torch-neuronx with PyTorch {supported} only, not {minor}.",
        hint=hint,
    )


def _fix_target(python: PythonFacts | None) -> str:
    if python is None:
        return ""
    if python.in_venv:
        return f"--venv {shlex.quote(python.prefix)}"
    # install refuses an interpreter outside a venv: it creates one with it instead.
    return f"--venv {NEW_ENV} --python {shlex.quote(python.executable)}"


def _needs_new_env(python: PythonFacts | None, pairing: Pairing) -> bool:
    """An install into the target could not work as printed: fixes install into a new one."""
    if python is None:
        return False
    # never install into neuron-env's own venv, nor keep a Python the pairing lacks
    return python.minor not in pairing.python or is_own_environment(python)


def is_own_environment(python: PythonFacts) -> bool:
    """The target is the environment neuron-env itself runs in (the quick start's venv)."""
    return OWN_DISTRIBUTION in python.distributions
