"""The conflicts check: what must not share an environment with TorchNeuron.

The legacy PyTorch/XLA stack (torch-xla, libneuronxla, neuronx-distributed*, transformers-neuronx
beside an XLA build of torch-neuronx), two distributions owning the ``torchao`` import package,
and other backends that autoload with ``import torch``. The libraries that run on the XLA line
only (optimum-neuron, neuronx-distributed*: the matrix's ``[libraries]`` table) are named with
the table's own words, which ``scan`` says too, and what to use on TorchNeuron instead.
"""

from __future__ import annotations

import shlex

from neuron_env.checks.model import Context, Verdict, fail, ok, warn
from neuron_env.checks.placeholders import is_placeholder
from neuron_env.checks.versions import loose_version
from neuron_env.facts import HostFacts
from neuron_env.matrix.model import Library
from neuron_env.matrix.names import decides_the_device, known_neuron_names

XLA_STACK = ("torch-xla", "libneuronxla", "transformers-neuronx")
XLA_STACK_PREFIXES = ("neuronx-distributed",)
INF1_PACKAGES = ("neuron-cc", "torch-neuron")


def xla_leftovers(facts: HostFacts, ctx: Context) -> list[str]:
    """Installed packages of the PyTorch/XLA era (placeholders are the placeholder check's)."""
    assert facts.python is not None
    return [
        name
        for name, dist in sorted(facts.python.distributions.items())
        if (name in XLA_STACK or name.startswith(XLA_STACK_PREFIXES))
        and not is_placeholder(name, dist, ctx.releases)
    ]


def check_conflicts(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.conflicts``: no legacy PyTorch/XLA stack, no torchao beside torchao-neuron,
    and notes on competing backends."""
    assert facts.python is not None
    twice = _recorded_twice(facts, ctx)
    if twice is not None:
        return twice
    if ctx.legacy_family:  # the XLA stack (or, on Inf1, torch-neuron) is what runs there
        legacy = None if ctx.legacy_family == "Inf1" else _inf1_packages(facts, ctx)
        return legacy or _torchao(facts, ctx) or _notes(facts, ctx)
    return (_inf1_packages(facts, ctx) or _xla_stack(facts, ctx) or _torchao(facts, ctx)) or _notes(
        facts, ctx
    )


def _recorded_twice(facts: HostFacts, ctx: Context) -> Verdict | None:
    """Two records of one distribution in one site-packages (``torch-2.13.0.dist-info`` beside
    ``torch-2.14.0.dist-info``): an install or uninstall stopped half-way. Which version's files
    are on disk is unknown, and import tools disagree on the version (each takes the first
    folder its listing gives)."""
    assert facts.python is not None
    twice = {n: d for n, d in sorted(facts.python.distributions.items()) if d.duplicates}
    if not twice:
        return None
    listed = "; ".join(
        f"{name} {' and '.join([dist.version, *dist.duplicates])}" for name, dist in twice.items()
    )
    known = known_neuron_names(ctx.releases)
    if any(decides_the_device(name, known) for name in twice):
        fix = ctx.install_command()  # from the Neuron and PyTorch indexes only: install rebuilds
    else:  # each uninstall removes one record; then the version doctor read, once
        arguments: list[str] = []
        for name, dist in twice.items():
            arguments += [f"uninstall -y {shlex.quote(name)}"] * (1 + len(dist.duplicates))
            arguments.append(f"install {shlex.quote(f'{name}=={dist.version}')}")
        fix = " && ".join(ctx.pip_commands(*arguments))
    return fail(
        f"Recorded more than once in one site-packages (an install or uninstall stopped "
        f"half-way): {listed}",
        fix=fix,
        detail="Which version's files are on disk is unknown: pip and importlib.metadata take "
        "the first record their folder listing gives.",
    )


def _inf1_packages(facts: HostFacts, ctx: Context) -> Verdict | None:
    """The Inf1-era pip packages (neuron-cc, torch-neuron): another SDK, not TorchNeuron's."""
    assert facts.python is not None
    dists = facts.python.distributions
    found = [name for name in INF1_PACKAGES if name in dists]
    if not found:
        return None
    return fail(
        "Inf1-era Neuron packages are installed: "
        + ", ".join(f"{name} {dists[name].version}" for name in found),
        fix=f"{_pip(ctx)} uninstall -y {' '.join(shlex.quote(n) for n in found)}",
        detail="neuron-cc and torch-neuron are the first Neuron SDK's compiler and PyTorch "
        "integration (Inf1 only); TorchNeuron uses neuronx-cc and torch-neuronx.",
    )


def _native(facts: HostFacts, ctx: Context) -> bool | None:
    """True for TorchNeuron, False for the legacy XLA build, None without torch-neuronx."""
    assert facts.python is not None
    dist = facts.python.dist("torch-neuronx")
    if dist is None or is_placeholder("torch-neuronx", dist, ctx.releases):
        return None
    version = loose_version(dist.version)
    return version is not None and version not in ctx.release.legacy_xla.versions


def _xla_stack(facts: HostFacts, ctx: Context) -> Verdict | None:
    assert facts.python is not None
    dists, native = facts.python.distributions, _native(facts, ctx)
    left = xla_leftovers(facts, ctx)
    shown = ", ".join(f"{name} {dists[name].version}" for name in left)
    if native is False:
        items = [f"torch-neuronx {dists['torch-neuronx'].version}", *shown.split(", ")[: len(left)]]
        return fail(
            f"The legacy PyTorch/XLA stack is installed: {', '.join(items)}",
            fix=ctx.uninstall_then_install(["torch-neuronx", *left]),
            detail="TorchNeuron replaces all of it; installing torch-neuronx over it would leave "
            "the XLA packages behind, and they break device registration.",
        )
    if "torch-xla" in left:
        fix = f"{_pip(ctx)} uninstall -y {' '.join(shlex.quote(n) for n in left)}"
        if native is None:  # nothing of TorchNeuron yet: remove the XLA stack, then install
            fix = ctx.uninstall_then_install(left)
        return fail(
            f"PyTorch/XLA packages are installed beside TorchNeuron: {shown}",
            fix=fix,
            detail="TorchNeuron replaces PyTorch/XLA; mixing them breaks device registration.",
        )
    return None


def _torchao(facts: HostFacts, ctx: Context) -> Verdict | None:
    assert facts.python is not None
    dists = facts.python.distributions
    if "torchao" not in dists or "torchao-neuron" not in dists:
        return None
    neuron = dists["torchao-neuron"].version
    index = ctx.release.index_for("torch-neuronx")
    source = f"--index-url {shlex.quote(ctx.release.indexes[index].url)} " if index else ""
    reinstall = f"{_pip(ctx)} install --no-deps {source}{shlex.quote(f'torchao-neuron=={neuron}')}"
    return fail(
        f"torchao {dists['torchao'].version} and torchao-neuron {neuron} are both installed: "
        "they own the same import package 'torchao', so whichever came last overwrote the other",
        fix=f"{_pip(ctx)} uninstall -y torchao torchao-neuron && {reinstall}",
        detail="Removing only upstream torchao would delete files torchao-neuron shares with it: "
        "remove both, then reinstall torchao-neuron from the Neuron index.",
    )


def xla_libraries(facts: HostFacts, ctx: Context) -> list[tuple[str, Library]]:
    """Installed libraries that the matrix's library table puts on the XLA line only
    (optimum-neuron, neuronx-distributed*, transformers-neuronx), placeholders left out."""
    assert facts.python is not None
    found = []
    for name, dist in sorted(facts.python.distributions.items()):
        library = ctx.release.xla_library(name)
        if library is not None and not is_placeholder(name, dist, ctx.releases):
            found.append((name, library))
    return found


def _library_notes(facts: HostFacts, ctx: Context) -> tuple[list[str], list[str]]:
    """What each XLA-line library pulls in (the table's own words), and what to do instead."""
    assert facts.python is not None
    dists = facts.python.distributions
    notes, advice = [], []
    for name, library in xla_libraries(facts, ctx):
        notes.append(
            f"{name} {dists[name].version} pulls in the XLA line of torch-neuronx, not "
            f"TorchNeuron: {library.statement()}"
        )
        if library.advice and library.advice not in advice:
            advice.append(library.advice)
    return notes, advice


def _notes(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.python is not None
    dists = facts.python.distributions
    # on Trn1/Inf2 the XLA line and its libraries are what runs: not conflicts there
    legacy = bool(ctx.legacy_family)
    notes, advice = ([], []) if legacy else _library_notes(facts, ctx)
    left = [] if legacy else xla_leftovers(facts, ctx)
    libraries = set() if legacy else {name for name, _ in xla_libraries(facts, ctx)}
    others = [name for name in left if name not in libraries]
    if others:
        notes.append(
            "XLA-era packages are installed, not part of a TorchNeuron environment: "
            + ", ".join(f"{name} {dists[name].version}" for name in others)
        )
    left = sorted({*left, *libraries})
    if "torchao" in dists:
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
        quoted = " ".join(
            shlex.quote(n) for n in [*left, *(["torchao"] if "torchao" in dists else [])]
        )
        fix = f"{_pip(ctx)} uninstall -y {quoted}" if quoted else ""
        return warn(
            "; ".join(notes),
            fix=fix or "Uninstall what this environment does not need.",
            detail=" ".join(advice),
        )
    return ok("No conflicting packages")


def _pip(ctx: Context) -> str:
    python = ctx.python or "python"
    return (
        f"{python} -m pip"
        if ctx.has_pip
        else f"{python} -m ensurepip --default-pip && {python} -m pip"
    )
