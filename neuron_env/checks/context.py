"""Choosing what to judge a host against: the Neuron release and the PyTorch pairing.

``--release`` and ``--torch`` win. Otherwise the release is the newest one consistent with what
is installed (torch-neuronx family, system package versions) and the pairing is the installed
torch's; with nothing installed, the latest release.
"""

from __future__ import annotations

from neuron_env.checks.model import Context
from neuron_env.checks.versions import loose_version, same_release_line
from neuron_env.errors import UnsupportedCombination
from neuron_env.facts import HostFacts
from neuron_env.matrix import Matrix, Release
from neuron_env.matrix.model import Pairing


def build_context(
    matrix: Matrix, facts: HostFacts, *, release: str | None = None, torch: str | None = None
) -> Context:
    """The release and pairing to judge ``facts`` against, with the reasons for the choice."""
    chosen, release_reason = _release(matrix, facts, release)
    pairing, torch_reason = _pairing(chosen, facts, torch)
    return Context(chosen, release_reason, pairing, torch_reason, _fix_target(facts))


def _release(matrix: Matrix, facts: HostFacts, requested: str | None) -> tuple[Release, str]:
    if requested is not None:
        return matrix.get(requested), "requested with --release"
    evidence = installed_evidence(facts)
    if not evidence:
        return matrix.latest(), "the latest; nothing installed to detect a release from"
    scored = [(_agreement(r, evidence), r.version, r) for r in matrix.releases]
    best_score = max(score for score, _, _ in scored)
    if best_score == 0:
        return matrix.latest(), "the latest; installed versions match no known release"
    best = max((s for s in scored if s[0] == best_score), key=lambda s: s[1])[2]
    shown = [f"{name} {version}" for name, version in list(evidence.items())[:2]]
    more = f" and {len(evidence) - 2} more package versions" if len(evidence) > 2 else ""
    return best, f"detected from {', '.join(shown)}{more}"


def installed_evidence(facts: HostFacts) -> dict[str, str]:
    """Installed versions that identify a release: torch-neuronx and the apt packages."""
    evidence: dict[str, str] = {}
    if facts.python and (dist := facts.python.dist("torch-neuronx")):
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


def _pairing(release: Release, facts: HostFacts, torch: str | None) -> tuple[Pairing | None, str]:
    if torch is not None:
        minor = ".".join(torch.split(".")[:2])
        pairing = release.pairing_for(minor)
        if pairing is None:
            supported = " and ".join(p.torch_minor for p in release.pairings)
            raise UnsupportedCombination(
                f"Neuron {release.version} pairs torch-neuronx with PyTorch {supported} only, "
                f"not {minor}.",
                hint="Pick one of those with --torch, or another release with --release.",
            )
        return pairing, "requested with --torch"
    installed = facts.python.dist("torch") if facts.python else None
    version = loose_version(installed.version) if installed else None
    if version is None:
        return None, "no torch installed"
    pairing = release.pairing_for(f"{version.major}.{version.minor}")
    return pairing, f"the installed torch {installed.version if installed else ''}".strip()


def _fix_target(facts: HostFacts) -> str:
    python = facts.python
    if python is None:
        return ""
    return f"--venv {python.prefix}" if python.in_venv else f"--python {python.executable}"
