"""The requirements check: what ``pip check`` says, read from metadata, plus the companions.

Every installed distribution's ``Requires-Dist`` must be met in the target: markers evaluated for
the target interpreter (not neuron-env's), extras only where another distribution asks for them.
A requirement on a package the release pins (torch, torch-neuronx, neuronx-cc, nki, a companion)
that the release's own version cannot meet is a conflict with the release, not a missing package.
Installed companions (TorchTitan Neuron, TorchAO Neuron) must be the release's version, for the
installed PyTorch and the instance's family.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator
from typing import TYPE_CHECKING

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_env.checks.model import Context, Status, Verdict, fail, ok, skip, warn
from neuron_env.checks.placeholders import is_placeholder
from neuron_env.checks.versions import loose_version
from neuron_env.facts import Distribution, HostFacts
from neuron_env.frozen import frozen
from neuron_env.matrix.model import Companion
from neuron_env.matrix.names import canonical, is_neuron_name, known_neuron_names
from neuron_env.wording import plural

if TYPE_CHECKING:  # packaging's requirement and marker parsers load only for metadata to read
    from packaging.markers import Marker
    from packaging.requirements import Requirement

IMPLEMENTATIONS = {"cpython": "CPython", "pypy": "PyPy"}
SHOWN = 4
"""Problems named in the summary; the detail lists them all."""


@frozen
class Unmet:
    """``package version`` requires ``requirement``, which the target does not satisfy."""

    package: str
    version: str
    requirement: Requirement
    installed: str | None

    @property
    def name(self) -> str:
        return canonical(self.requirement.name)

    def describe(self) -> str:
        wanted = f"{self.requirement.name}{self.requirement.specifier}"
        found = f"{self.installed} is installed" if self.installed else "it is not installed"
        return f"{self.package} {self.version} needs {wanted}, but {found}"


@frozen
class Problem:
    """One requirement problem as the check reports it, with its fix (may be empty)."""

    status: Status
    text: str
    fix: str


def check_requirements(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    dists = facts.python.distributions
    if any(d.requires_dist is None for d in dists.values()):
        return skip(
            "The facts snapshot holds no Requires-Dist data (taken by an older neuron-env): "
            f"take it again with '{ctx.program} facts' to check requirements"
        )
    unmet = unmet_requirements(dists, marker_environment(facts))
    # Outside a venv, what no installer recorded is the OS's (Debian's python3-gi needs a pycairo
    # only python3-gi-cairo brings): its package manager's business, and a pip fix for it would
    # not run there (PEP 668: the system Python is externally managed).
    os_owned = [u for u in unmet if _os_package(facts, u.package)]
    unmet = [u for u in unmet if not _os_package(facts, u.package)]
    left = (
        "\nLeft to the OS's package manager (installed by it, not by pip): "
        + "; ".join(u.describe() for u in os_owned)
        if os_owned
        else ""
    )
    problems = [*(_judge_unmet(u, dists, ctx) for u in unmet), *_companion_problems(facts, ctx)]
    if not problems:
        if os_owned:
            return ok(
                f"The requirements of all {plural(len(dists), 'distribution')} are met, but "
                f"{plural(len(os_owned), 'requirement')} of the OS's own packages, which its "
                "package manager keeps",
                detail=left.strip(),
            )
        return ok(f"The requirements of all {plural(len(dists), 'distribution')} are met")
    status: Status = "fail" if any(p.status == "fail" for p in problems) else "warn"
    shown = "; ".join(p.text for p in problems[:SHOWN])
    more = f"; and {len(problems) - SHOWN} more (see --verbose)" if len(problems) > SHOWN else ""
    fixes = list(dict.fromkeys(p.fix for p in problems if p.fix))
    verdict = fail if status == "fail" else warn
    detail = "\n".join(p.text for p in problems) + left
    return verdict(shown + more, fix=" && ".join(fixes), detail=detail)


def _os_package(facts: HostFacts, name: str) -> bool:
    """``name`` is the OS's: in the system Python (prefix ``/usr``, no venv), with no INSTALLER
    (apt's and dnf's ``python3-*`` write none; pip, uv and conda do, or live elsewhere)."""
    python = facts.python
    assert python is not None
    dist = python.distributions.get(canonical(name))
    system = not python.in_venv and python.prefix.rstrip("/") == "/usr"
    return system and dist is not None and dist.installer is None


# --- Requires-Dist ------------------------------------------------------------------------------


def marker_environment(facts: HostFacts) -> dict[str, str]:
    """PEP 508 marker values of the *target* (TorchNeuron hosts are Linux), from the facts."""
    assert facts.python is not None
    python, host = facts.python, facts.os
    return {
        "implementation_name": python.implementation,
        "implementation_version": python.version,
        "os_name": "posix",
        "platform_machine": (host.arch if host else None) or "x86_64",
        "platform_python_implementation": IMPLEMENTATIONS.get(
            python.implementation, python.implementation
        ),
        "platform_release": (host.kernel if host else None) or "",
        "platform_system": "Linux",
        "platform_version": "",
        "python_full_version": python.version,
        "python_version": python.minor,
        "sys_platform": "linux",
    }


_remembered_once: list[bool] = []


def unmet_requirements(dists: dict[str, Distribution], environment: dict[str, str]) -> list[Unmet]:
    """Every requirement of an installed distribution that the installed set does not meet.

    Extras count only where some installed distribution asks for them (``pkg[extra]``). The first
    judgment of a run takes an earlier run's answer for exactly these distributions and this
    environment (:mod:`neuron_env.memo`): "all met" then needs no import of packaging's
    requirement and marker parsers (~10 ms of a doctor run). Later judgments in the same run
    (``fleet`` judges many hosts) have the parsers loaded already and compute it.
    """
    if _remembered_once:
        return _unmet(dists, environment)
    _remembered_once.append(True)
    import packaging

    from neuron_env.memo import remembered, source_files

    judged = sorted((name, d.version, d.requires_dist) for name, d in dists.items())
    inputs = repr((judged, sorted(environment.items()), packaging.__version__)).encode()
    code = source_files(__name__, "neuron_env.matrix.names", "neuron_env.checks.versions")
    return remembered("requirements", [inputs, *code], lambda: _unmet(dists, environment))


def _unmet(dists: dict[str, Distribution], environment: dict[str, str]) -> list[Unmet]:
    installed: dict[str, tuple[str, Distribution]] = {
        canonical(name): (name, dist) for name, dist in dists.items()
    }
    parsed = {key: _parse(dist.requires_dist or ()) for key, (_, dist) in installed.items()}
    extras = _requested_extras(parsed, environment)
    found = []
    for key, (name, dist) in sorted(installed.items()):
        for requirement in _active(parsed[key], extras.get(key, {""}), environment):
            there = installed.get(canonical(requirement.name))
            if there is None or not _satisfies(there[1].version, requirement.specifier):
                shown = f"{requirement.name} {there[1].version}" if there else None
                found.append(Unmet(name, dist.version, requirement, shown))
    return found


def _parse(lines: tuple[str, ...]) -> list[Requirement]:
    from packaging.requirements import InvalidRequirement, Requirement

    parsed = []
    for line in lines:
        try:
            parsed.append(Requirement(line))
        except InvalidRequirement:
            continue  # pip check skips what it cannot read, too
    return parsed


def _requested_extras(
    parsed: dict[str, list[Requirement]], environment: dict[str, str]
) -> dict[str, set[str]]:
    """Extras asked for by the active requirements, followed until nothing new is asked."""
    extras: dict[str, set[str]] = {key: {""} for key in parsed}
    pending = list(parsed)
    while pending:
        key = pending.pop()
        for requirement in _active(parsed[key], extras[key], environment):
            target = canonical(requirement.name)
            new = set(requirement.extras) - extras.get(target, set())
            if target in extras and new:
                extras[target] |= new
                pending.append(target)
    return extras


def _active(
    requirements: list[Requirement], extras: set[str], environment: dict[str, str]
) -> Iterator[Requirement]:
    for requirement in requirements:
        if requirement.marker is None or any(
            _applies(requirement.marker, environment, extra) for extra in extras
        ):
            yield requirement


def _applies(marker: Marker, environment: dict[str, str], extra: str) -> bool:
    try:
        return marker.evaluate({**environment, "extra": extra})
    except ValueError:  # a comparison packaging cannot make (a kernel release as a version)
        return False


def _satisfies(version: str, specifier: SpecifierSet) -> bool:
    try:
        return specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return True  # a legacy version string: nothing to judge, as pip check


# --- judging an unmet requirement ---------------------------------------------------------------


def _judge_unmet(unmet: Unmet, dists: dict[str, Distribution], ctx: Context) -> Problem:
    if _release_offers(ctx, canonical(unmet.package)) is not None:
        # A package of the release itself (torch-neuronx needing another torch): reinstall the
        # release as a whole, never remove one of its parts.
        return Problem("fail", unmet.describe(), ctx.install_command())
    offered = _release_offers(ctx, unmet.name)
    if offered is not None:
        version, shown = offered
        if version is None or unmet.requirement.specifier.contains(version, prereleases=True):
            return Problem("fail", unmet.describe(), ctx.install_command())
        return Problem(
            "fail",
            f"{unmet.describe()}, and Neuron {ctx.release.version} pins {shown}: "
            f"{unmet.package} cannot share an environment with this release",
            f"{_pip(ctx)} uninstall -y {shlex.quote(unmet.package)}",
        )
    if is_neuron_name(unmet.name, known_neuron_names(ctx.releases)):
        return Problem(
            "fail",
            f"{unmet.describe()}; Neuron {ctx.release.version} does not ship "
            f"{unmet.requirement.name} (an XLA-era or unknown Neuron package)",
            f"{_pip(ctx)} uninstall -y {shlex.quote(unmet.package)}",
        )
    return Problem("fail", unmet.describe(), _install_missing(unmet, dists, ctx))


def _release_offers(ctx: Context, name: str) -> tuple[Version | None, str] | None:
    """The version the release installs for ``name`` (None: a range), or None if it pins none."""
    pairing = ctx.pairing
    if name == "torch":
        return (pairing.torch, f"torch {pairing.torch}") if pairing else (None, "torch")
    if name == "torch-neuronx":
        if pairing is None:
            return None, "torch-neuronx"
        return pairing.torch_neuronx, f"torch-neuronx {pairing.torch_neuronx_spec}"
    pinned = ctx.release.packages.get(name) or ctx.release.companions.get(name)
    if pinned is None:
        return None
    return pinned.version, f"{name}{pinned.requirement_spec}"


def _install_missing(unmet: Unmet, dists: dict[str, Distribution], ctx: Context) -> str:
    """``pip install 'REQ'`` holding the installed torch and torch-neuronx where they are."""
    requirement = unmet.requirement
    extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
    wanted = [f"{requirement.name}{extras}{requirement.specifier}"]
    held = [
        f"{name}=={dists[name].version}" for name in ("torch", "torch-neuronx") if name in dists
    ]
    return f"{_pip(ctx)} install " + " ".join(shlex.quote(r) for r in [*wanted, *held])


# --- companions ---------------------------------------------------------------------------------


def _companion_problems(facts: HostFacts, ctx: Context) -> Iterator[Problem]:
    assert facts.python is not None
    known = {name for r in ctx.releases for name in r.companions}
    for name in sorted(known & set(facts.python.distributions)):
        dist = facts.python.distributions[name]
        if is_placeholder(name, dist, ctx.releases):
            continue  # the placeholders check reports it
        companion = ctx.release.companions.get(name)
        if companion is None:
            yield _not_in_release(name, dist, ctx)
            continue
        problem = _companion_version(name, dist, companion, ctx) or _companion_fit(
            name, dist, companion, facts, ctx
        )
        if problem is not None:
            yield problem


def _not_in_release(name: str, dist: Distribution, ctx: Context) -> Problem:
    others = [str(r.version) for r in ctx.releases if name in r.companions]
    return Problem(
        "warn",
        f"{name} {dist.version} is not a companion of Neuron {ctx.release.version} "
        f"(Neuron {', '.join(others)} has it)",
        f"{_pip(ctx)} uninstall -y {shlex.quote(name)}",
    )


def _companion_version(
    name: str, dist: Distribution, companion: Companion, ctx: Context
) -> Problem | None:
    spec = SpecifierSet(companion.requirement_spec)
    version = loose_version(dist.version)
    if version is not None and spec.contains(version, prereleases=True):
        return None
    pinned = f"Neuron {ctx.release.version} pins {name}{spec}"
    owners = [
        str(r.version)
        for r in ctx.releases
        if name in r.companions
        and version is not None
        and SpecifierSet(r.companions[name].requirement_spec).contains(version, prereleases=True)
    ]
    fix = _reinstall_companion(name, companion, ctx)
    if not owners:
        return Problem(
            "fail",
            f"{name} {dist.version} is no Neuron release's version ({pinned}): "
            "an impostor from another index?",
            fix,
        )
    status: Status = "fail" if ctx.requested and companion.confirmed else "warn"
    return Problem(status, f"{name} {dist.version} is Neuron {owners[-1]}'s; {pinned}", fix)


def _companion_fit(
    name: str, dist: Distribution, companion: Companion, facts: HostFacts, ctx: Context
) -> Problem | None:
    assert facts.python is not None
    torch = facts.python.dist("torch")
    torch_version = loose_version(torch.version) if torch else None
    if torch_version is not None:
        minor = f"{torch_version.major}.{torch_version.minor}"
        if minor not in companion.torch:
            return Problem(
                "fail",
                f"{name} {dist.version} runs on PyTorch {', '.join(companion.torch)} only, "
                f"but torch {torch.version if torch else ''} is installed",
                ctx.install_command(companion.torch[-1]),
            )
    instance = facts.ec2.instance_type if facts.ec2 else None
    family = ctx.release.family_of(instance) if instance else None
    if family is not None and family not in companion.families:
        status: Status = "fail" if companion.families_confirmed else "warn"
        return Problem(
            status,
            f"{name} {dist.version} runs on {', '.join(companion.families)} only, "
            f"and this host is a {instance}",
            f"{_pip(ctx)} uninstall -y {shlex.quote(name)}",
        )
    return None


def _reinstall_companion(name: str, companion: Companion, ctx: Context) -> str:
    """From the companion's own index only (``--index-url``), never from the default index."""
    url = ctx.release.indexes[companion.index].url
    wanted = shlex.quote(f"{name}{companion.requirement_spec}")
    return f"{_pip(ctx)} install --no-deps --index-url {shlex.quote(url)} {wanted}"


def _pip(ctx: Context) -> str:
    python = ctx.python or "python"
    if ctx.has_pip:
        return f"{python} -m pip"
    return f"{python} -m ensurepip --default-pip && {python} -m pip"
