"""Python environment checks: torch, torch-neuronx, compiler, placeholders and conflicts."""

from __future__ import annotations

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.checks.model import Context, Verdict, fail, ok, warn
from neuron_env.checks.versions import loose_version, same_release_line
from neuron_env.facts import Distribution, HostFacts
from neuron_env.matrix.model import Release

WRONG_PACKAGE = "WRONG PACKAGE"


def check_torch(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    dist = facts.python.dist("torch")
    if dist is None:
        return fail("PyTorch is not installed in the target environment", fix=ctx.install_command())
    version = loose_version(dist.version)
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
    return ok(f"torch {dist.version}")


def check_torch_neuronx(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    dist = facts.python.dist("torch-neuronx")
    if dist is None:
        return fail(
            "torch-neuronx is not installed in the target environment", fix=ctx.install_command()
        )
    release, version = ctx.release, loose_version(dist.version)
    fix = f"pip uninstall -y torch-neuronx && {ctx.install_command()}"
    if is_placeholder("torch-neuronx", dist, release):
        return fail(
            f"torch-neuronx {dist.version} is the 'WRONG PACKAGE' placeholder "
            "from the default index",
            fix=fix,
        )
    if version is None or version in release.legacy_xla.versions:
        return fail(
            f"torch-neuronx {dist.version} is the legacy PyTorch/XLA line, not TorchNeuron "
            "(same package name, different product)",
            fix=fix,
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
        return warn(
            f"torch-neuronx {dist.version} is not Neuron {ctx.release.version}'s build ({shipped})",
            fix=ctx.install_command(torch_minor),
        )
    return ok(f"torch-neuronx {dist.version} (TorchNeuron, Neuron {ctx.release.version})")


def _minor(version: Version) -> str:
    return f"{version.major}.{version.minor}"


def _installed_version(facts: HostFacts, name: str) -> Version | None:
    dist = facts.python.dist(name) if facts.python else None
    return loose_version(dist.version) if dist else None


def check_compiler(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    problems, notes = [], []
    for name, pkg in ctx.release.packages.items():
        dist = facts.python.dist(name)
        spec = SpecifierSet(pkg.requirement_spec)
        if dist is None:
            problems.append(f"{name} is not installed")
        elif is_placeholder(name, dist, ctx.release):
            problems.append(f"{name} {dist.version} is the 'WRONG PACKAGE' placeholder")
        elif (v := loose_version(dist.version)) is None or v not in spec:
            notes.append(f"{name} {dist.version} (Neuron {ctx.release.version} pins {spec})")
    if problems:
        return fail("; ".join(problems), fix=ctx.install_command())
    if notes:
        return warn("Not the release's version: " + "; ".join(notes), fix=ctx.install_command())
    installed = facts.python.distributions
    return ok(", ".join(f"{name} {installed[name].version}" for name in ctx.release.packages))


def check_placeholders(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    found = [
        f"{name} {dist.version}"
        for name, dist in sorted(facts.python.distributions.items())
        if is_placeholder(name, dist, ctx.release)
    ]
    if found:
        names = " ".join(f.split()[0] for f in found)
        return fail(
            "'WRONG PACKAGE' placeholders from the default index are installed: "
            + ", ".join(found),
            fix=f"pip uninstall -y {names} && {ctx.install_command()}",
            detail="They come from installing Neuron package names without the Neuron index.",
        )
    return ok("No 'WRONG PACKAGE' placeholders")


def is_placeholder(name: str, dist: Distribution, release: Release) -> bool:
    known = release.placeholders.get(name)
    version = loose_version(dist.version)
    by_version = known is not None and version is not None and version in known.versions
    return by_version or WRONG_PACKAGE in dist.summary


def check_conflicts(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    dists = facts.python.distributions
    neuronx = _installed_version(facts, "torch-neuronx")
    native = neuronx is not None and neuronx not in ctx.release.legacy_xla.versions
    if native and "torch-xla" in dists:
        return fail(
            f"torch-xla {dists['torch-xla'].version} is installed beside the native backend",
            fix="pip uninstall -y torch-xla",
            detail="TorchNeuron replaces PyTorch/XLA; mixing them breaks device registration.",
        )
    notes = []
    if native and "libneuronxla" in dists:
        notes.append(
            f"libneuronxla {dists['libneuronxla'].version} (the XLA/JAX runtime) is installed"
        )
    if "torchao" in dists and "torchao-neuron" not in dists:
        notes.append(
            "upstream torchao is installed; TorchNeuron needs torchao-neuron (same import name)"
        )
    others = [b for b in facts.python.torch_backends if b != "torch_neuronx"]
    if others:
        notes.append(
            f"other torch backends autoload ({', '.join(others)}); "
            "a PrivateUse1 backend loaded first hides torch.neuron"
        )
    if notes:
        return warn("; ".join(notes), fix="Uninstall what this environment does not need.")
    return ok("No conflicting packages")
