"""Known issues: public bugs in what is installed, recorded by the release that shipped it, and
the upgrade (to the release that fixes them) for the user's own PyTorch family."""

from __future__ import annotations

from packaging.version import Version

from neuron_env.checks.cores import instance_type
from neuron_env.checks.model import Context, Verdict, ok, skip, warn
from neuron_env.checks.versions import package_version
from neuron_env.facts import HostFacts
from neuron_env.matrix.model import KnownIssue, Release
from neuron_env.wording import join_words, plural


def check_known_issues(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.known-issues``: no installed package is on a line the judged release records a
    known issue for; else a warning naming each issue and its source, and the fixing upgrade."""
    assert facts.python is not None
    release = ctx.release
    hits: dict[tuple[str, str], list[KnownIssue]] = {}
    for issue in release.known_issues:
        dist = facts.python.dist(issue.package)
        version = package_version(dist.version) if dist else None
        if dist is not None and version is not None and issue.affected(version):
            hits.setdefault((issue.package, dist.version), []).append(issue)
    if not hits:
        if not release.known_issues:
            return ok(f"Neuron {release.version} records no known issue")
        recorded = plural(len(release.known_issues), "known issue")
        return ok(f"None of the {recorded} Neuron {release.version} records affects this target")
    legacy = _legacy_host(facts, ctx)
    if legacy:  # TorchNeuron cannot run here: its bugs, and an upgrade of it, do not apply
        return skip(f"TorchNeuron does not run on a {legacy}: its known issues do not apply here")
    (package, installed), issues = next(iter(hits.items()))
    more = [f"{name} {version}" for name, version in list(hits)[1:]]
    version = package_version(installed)
    assert version is not None
    fixed = issues[0].fix_for(version)
    fixed_in = max(issue.fixed_in for issue in issues)
    summary = (
        f"{package} {installed} carries {plural(len(issues), 'known issue')} that Neuron "
        f"{fixed_in} fixes ({package} {fixed}): {_named_with_sources(issues, release)}"
    )
    if more:
        summary += f"; also affected: {join_words(more)}"
    return warn(summary, fix=_upgrade(ctx, version, fixed_in, package, fixed),
                detail="\n".join(f"{i.id}: {i.note}" for i in issues if i.note))  # fmt: skip


def _legacy_host(facts: HostFacts, ctx: Context) -> str | None:
    """The instance type, when it is of a family the native backend does not run on (Trn1)."""
    name = instance_type(facts)
    family = ctx.release.families.get(ctx.release.family_of(name)) if name else None
    return name if family is not None and not family.native else None


def _named_with_sources(issues: list[KnownIssue], release: Release) -> str:
    """``a, b (source: URL); c (source: URL2)``: each issue named, grouped by its sources."""
    groups: dict[str, list[str]] = {}
    for issue in issues:
        where = ", ".join(release.sources.get(s, s) for s in issue.sources)
        groups.setdefault(where, []).append(issue.summary)
    return "; ".join(f"{', '.join(names)} (source: {where})" for where, names in groups.items())


def _upgrade(
    ctx: Context, installed: Version, fixed_in: Version, package: str, fixed: Version | None
) -> str:
    """The install of the newest release that fixes them, for the user's own PyTorch family
    (torch-neuronx 2.13.3.0 is PyTorch 2.13's)."""
    if package == "torch-neuronx":
        minor: str | None = f"{installed.major}.{installed.minor}"
    else:
        minor = ctx.pairing.torch_minor if ctx.pairing else None
    target = next(
        (
            r
            for r in reversed(ctx.releases)
            if r.version >= fixed_in and minor is not None and r.pairing_for(minor) is not None
        ),
        None,
    )
    if target is None:
        return (
            f"Upgrade {package} to {fixed} (Neuron {fixed_in}): add that release's matrix file "
            "with --matrix-dir DIR to get its install command."
        )
    return ctx.install_command(minor, release=target)
