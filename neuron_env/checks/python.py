"""Python environment checks: torch, torch-neuronx, the compiler and nki, placeholders."""

from __future__ import annotations

import shlex

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_env.checks import legacy_host
from neuron_env.checks.conflicts import xla_leftovers
from neuron_env.checks.model import Context, Verdict, fail, not_compared, ok, warn
from neuron_env.checks.placeholders import is_placeholder, placeholder_reason
from neuron_env.checks.versions import package_version, same_release_line
from neuron_env.facts import Distribution, HostFacts
from neuron_env.matrix.model import PipPackage
from neuron_env.wording import join_words, plural


def check_torch(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.torch``: torch installed at exactly the version its torch-neuronx family pairs
    with."""
    assert facts.python is not None
    if ctx.legacy_family:
        return legacy_host.check_torch(facts, ctx)
    dist = facts.python.dist("torch")
    if dist is None:
        return fail("PyTorch is not installed in the target environment", fix=ctx.install_command())
    version = package_version(dist.version)
    if ctx.pairing is None:
        supported = " and ".join(p.torch_minor for p in ctx.release.pairings)
        return fail(
            f"torch {dist.version} has no torch-neuronx in Neuron {ctx.release.version} "
            f"(it pairs PyTorch {supported})",
            fix=ctx.install_command(),
        )
    if version is None or version.release[:3] != ctx.pairing.torch.release[:3]:
        return fail(
            f"torch {dist.version} is installed, but torch-neuronx {ctx.pairing.torch_neuronx} "
            f"needs exactly torch {ctx.pairing.torch}",
            fix=ctx.install_command(),
        )
    if version.local and version.local.startswith(("cu", "rocm")):
        return warn(
            f"torch {dist.version} is a GPU build; TorchNeuron is built against the CPU build",
            fix=ctx.install_command(),
        )
    return _cuda_build(facts, ctx, dist) or ok(f"torch {dist.version}")


def _cuda_build(facts: HostFacts, ctx: Context, torch: Distribution) -> Verdict | None:
    """The default index's torch is the CUDA build: no '+cpu', nvidia-* libraries beside it."""
    assert facts.python is not None and ctx.pairing is not None
    nvidia = sorted(n for n in facts.python.distributions if n.startswith("nvidia-"))
    if not nvidia or "+" in torch.version or "torch-neuronx" not in facts.python.distributions:
        return None
    index = ctx.release.index_for("torch")
    source = f" --index-url {shlex.quote(ctx.release.indexes[index].url)}" if index else ""
    python = ctx.python or "python"
    removed = " ".join(shlex.quote(n) for n in ["torch", *nvidia])
    pin = shlex.quote(f"torch=={ctx.pairing.torch}")
    return fail(
        f"torch {torch.version} is the CUDA build from the default index "
        f"({plural(len(nvidia), 'nvidia-* distribution')} beside it); "
        "torch-neuronx is built against the CPU build",
        fix=" && ".join(
            [
                *([] if ctx.has_pip else [f"{python} -m ensurepip --default-pip"]),
                f"{python} -m pip uninstall -y {removed}",
                f"{python} -m pip install{source} {pin}",
            ]
        ),
        detail="The CPU build comes from the PyTorch CPU index; dropping the CUDA build and its "
        "nvidia-* libraries frees several gigabytes TorchNeuron never uses.",
    )


def check_torch_neuronx(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.torch-neuronx``: the release's native TorchNeuron build, not the legacy XLA line
    or a placeholder."""
    assert facts.python is not None
    if ctx.legacy_family:
        return legacy_host.check_torch_neuronx(facts, ctx)
    dist = facts.python.dist("torch-neuronx")
    if dist is None:
        return fail(
            "torch-neuronx is not installed in the target environment", fix=ctx.install_command()
        )
    release, version = ctx.release, package_version(dist.version)
    if is_placeholder("torch-neuronx", dist, ctx.releases):
        return fail(
            f"torch-neuronx {dist.version} is the 'WRONG PACKAGE' placeholder "
            "from the default index",
            fix=ctx.uninstall_then_install(["torch-neuronx"]),
        )
    if version is None:
        return fail(
            f"torch-neuronx {dist.version!r} is not a valid version: not a build pip installs",
            fix=ctx.uninstall_then_install(["torch-neuronx"]),
        )
    if version in release.legacy_xla.versions:
        return fail(
            f"torch-neuronx {dist.version} is the legacy PyTorch/XLA line, not TorchNeuron "
            "(same package name, different product)",
            fix=ctx.uninstall_then_install(["torch-neuronx", *xla_leftovers(facts, ctx)]),
        )
    families = sorted({p.torch_neuronx for r in ctx.releases for p in r.pairings})
    if not any(same_release_line(version, family) for family in families):
        return fail(
            f"torch-neuronx {dist.version} is not a build of any Neuron release neuron-env "
            f"knows ({', '.join(map(str, families))}): an impostor from another index, or a "
            "release this matrix does not describe",
            fix=ctx.uninstall_then_install(["torch-neuronx"]),
            detail="For a newer Neuron release, add its matrix file with --matrix-dir DIR.",
        )
    return _judge_native_family(dist, version, facts, ctx)


def _judge_native_family(
    dist: Distribution, version: Version, facts: HostFacts, ctx: Context
) -> Verdict:
    torch_minor = _minor(version)
    torch = _installed_version(facts, "torch")
    if torch is not None and _minor(torch) != torch_minor:
        return fail(
            f"torch-neuronx {dist.version} pairs with PyTorch {torch_minor}, but torch "
            f"{torch} is installed",
            fix=ctx.install_command(_minor(torch)),
        )
    pairing = ctx.release.pairing_for(torch_minor)
    if pairing is None or not same_release_line(version, pairing.torch_neuronx):
        shipped = f"{pairing.torch_neuronx}" if pairing else "no build for this PyTorch"
        # Asked "is this host ready for R?": another release's build is a no.
        verdict = fail if ctx.requested else warn
        return verdict(
            f"torch-neuronx {dist.version} is not Neuron {ctx.release.version}'s build ({shipped})",
            fix=ctx.install_command(torch_minor),
        )
    return ok(f"torch-neuronx {dist.version} (TorchNeuron, Neuron {ctx.release.version})")


def _minor(version: Version) -> str:
    return f"{version.major}.{version.minor}"


def _installed_version(facts: HostFacts, name: str) -> Version | None:
    dist = facts.python.dist(name) if facts.python else None
    return package_version(dist.version) if dist else None


def check_compiler(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.compiler``: neuronx-cc and nki installed at the release's versions."""
    assert facts.python is not None
    if ctx.legacy_family:
        return _legacy_compiler(facts, ctx)
    problems, notes = [], []
    for name, pkg in ctx.release.packages.items():
        dist = facts.python.dist(name)
        spec = SpecifierSet(pkg.requirement_spec)
        version = package_version(dist.version) if dist else None
        if dist is None:
            problems.append(f"{name} is not installed")
        elif is_placeholder(name, dist, ctx.releases):
            problems.append(f"{name} {dist.version} is the 'WRONG PACKAGE' placeholder")
        elif version is not None and version in spec:
            continue
        elif not _any_release_pins(ctx, name, version):
            problems.append(
                f"{name} {dist.version} is no Neuron release's version (Neuron "
                f"{ctx.release.version} pins {spec}): an impostor from another index?"
            )
        elif ctx.requested and pkg.confirmed:
            problems.append(f"{name} {dist.version} (Neuron {ctx.release.version} pins {spec})")
        else:
            notes.append(f"{name} {dist.version} (Neuron {ctx.release.version} pins {spec})")
    unlisted = _unlisted_packages(facts, ctx)
    problems += [problem for problem, _ in unlisted if problem]
    if problems:
        return fail("; ".join(problems), fix=ctx.install_command())
    if notes:
        return warn("Not the release's version: " + "; ".join(notes), fix=ctx.install_command())
    if unlisted or not ctx.release.packages:
        names = [name for _, name in unlisted] or ["neuronx-cc or nki"]
        return not_compared(f"Neuron {ctx.release.version} lists no version of {join_words(names)}")
    installed = facts.python.distributions
    return ok(", ".join(f"{name} {installed[name].version}" for name in ctx.release.packages))


def _legacy_compiler(facts: HostFacts, ctx: Context) -> Verdict:
    """On Trn1/Inf2: a placeholder compiler is removed; the release's pins are TorchNeuron's."""
    assert facts.python is not None
    found = [
        name
        for name in ctx.release.packages
        if (dist := facts.python.dist(name)) and is_placeholder(name, dist, ctx.releases)
    ]
    if found:
        return fail(
            f"'WRONG PACKAGE' placeholders: {join_words(found)}",
            fix=legacy_host.uninstall(ctx, found),
            detail=legacy_host.reinstall_note(ctx),
        )
    packages = ctx.release.packages.items()
    pins = join_words(f"{name} {pkg.requirement_spec}" for name, pkg in packages)
    return legacy_host.not_for_this_host(f"Neuron {ctx.release.version}'s pins ({pins})", ctx)


def _unlisted_packages(facts: HostFacts, ctx: Context) -> list[tuple[str, str]]:
    """(problem or "", name) for each compiler package an earlier release pins and this one
    lists no version of: older than that earlier pin is a problem, else it is not compared."""
    assert facts.python is not None
    found: list[tuple[str, str]] = []
    for name, (release, pkg) in _earlier_pins(ctx).items():
        dist = facts.python.dist(name)
        version = package_version(dist.version) if dist else None
        floor = pkg.version or _spec_floor(pkg)
        if version is not None and floor is not None and version.release < floor.release:
            found.append((f"{name} {version} is older than the {floor} that Neuron {release} "
                          f"pinned (Neuron {ctx.release.version} lists none)", name))  # fmt: skip
        else:
            found.append(("", name))
    return found


def _spec_floor(pkg: PipPackage) -> Version | None:
    """The lowest version a pin's specifier admits, where it names one (``==2.*`` names 2)."""
    floors = [
        Version(spec.version.removesuffix(".*"))
        for spec in pkg.spec or ()
        if spec.operator in ("==", ">=", "~=", "===") and _is_version(spec.version)
    ]
    return min(floors, default=None)


def _is_version(text: str) -> bool:
    try:
        Version(text.removesuffix(".*"))
    except InvalidVersion:
        return False
    return True


def _earlier_pins(ctx: Context) -> dict[str, tuple[Version, PipPackage]]:
    """Compiler packages the judged release lists no version of, with the newest earlier
    release's pin of each."""
    pins: dict[str, tuple[Version, PipPackage]] = {}
    for release in sorted(ctx.releases, key=lambda r: r.version, reverse=True):
        if release.version >= ctx.release.version:
            continue
        for name, pkg in release.packages.items():
            if name not in ctx.release.packages:
                pins.setdefault(name, (release.version, pkg))
    return pins


def _any_release_pins(ctx: Context, name: str, version: Version | None) -> bool:
    """True when some known release pins ``version`` of ``name`` (another release's build)."""
    return version is not None and any(
        version in SpecifierSet(r.packages[name].requirement_spec)
        for r in ctx.releases
        if name in r.packages
    )


def check_placeholders(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.placeholders``: no 'WRONG PACKAGE' (or empty) placeholders from the default index
    under Neuron names."""
    assert facts.python is not None
    found = {
        name: (dist, reason)
        for name, dist in sorted(facts.python.distributions.items())
        if (reason := placeholder_reason(name, dist, ctx.releases))
    }
    if not found:
        return ok("No 'WRONG PACKAGE' placeholders")
    listed = ", ".join(f"{name} {dist.version}" for name, (dist, _) in found.items())
    why = [f"{name}: {reason}" for name, (_, reason) in found.items()]
    # On Trn1/Inf2 nothing of TorchNeuron is installed in their place: it does not run there.
    fix = (legacy_host.uninstall(ctx, list(found)) if ctx.legacy_family
           else ctx.uninstall_then_install(found))  # fmt: skip
    return fail(
        "Placeholders from the default index are installed under Neuron names ('WRONG PACKAGE' "
        f"or empty packages): {listed}",
        fix=fix,
        detail="They come from installing Neuron package names without the Neuron index.\n"
        + "\n".join(why),
    )
