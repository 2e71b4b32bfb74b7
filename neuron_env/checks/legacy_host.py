"""Hosts TorchNeuron does not run on: Trn1, Trn1n, Inf2 and Inf1.

There the legacy PyTorch/XLA line of torch-neuronx (with torch-xla, e.g. the Deep Learning AMI's
venv ``/opt/aws_neuronx_venv_pytorch_*``) is what runs. The report says once, at the top, that
TorchNeuron needs Trn2/Trn3; the checks judge that XLA environment for what can be judged
(placeholders, conflicts, requirements, cores, driver) and never print a fix that removes it or
installs TorchNeuron: a printed fix must make *this* host better.
"""

from __future__ import annotations

import shlex

from neuron_env.checks.device_identity import driver_identity
from neuron_env.checks.model import Context, Verdict, fail, ok, skip
from neuron_env.checks.placeholders import is_placeholder
from neuron_env.checks.versions import package_version
from neuron_env.facts import HostFacts
from neuron_env.matrix.model import Release

DLAMI_XLA_VENV = "/opt/aws_neuronx_venv_pytorch_*"
FAMILY_NAMES = {"trn1": "Trn1", "trn1n": "Trn1n", "inf2": "Inf2", "inf1": "Inf1"}


def legacy_family(facts: HostFacts, release: Release) -> str:
    """``Trn1`` on an instance of a family the native backend does not run on (from IMDS, else
    from the family the driver's sysfs names), else ""."""
    if facts.ec2 and facts.ec2.instance_type:
        family_name: str | None = release.family_of(facts.ec2.instance_type)
    else:
        identity = driver_identity(facts)
        family_name = identity.family if identity else None
    family = release.families.get(family_name or "")
    if family_name is None or family is None or family.native:
        return ""
    return FAMILY_NAMES.get(family_name, family_name)


def headline(family: str) -> str:
    """What the report says once, at the top, on such a host."""
    article = "an" if family.startswith("Inf") else "a"
    return (
        f"This is {article} {family} instance: TorchNeuron needs Trn2 or Trn3. The environment "
        f"that runs on {family}, {what_runs(family)}, is judged for what can be judged; no fix "
        "here removes it or installs TorchNeuron."
    )


def what_runs(family: str) -> str:
    """The PyTorch environment that runs on ``family``."""
    if family == "Inf1":
        return "the Neuron SDK for Inf1 (torch-neuron, neuron-cc)"
    return f"the PyTorch/XLA line of torch-neuronx (e.g. the DLAMI venv {DLAMI_XLA_VENV})"


def check_torch_neuronx(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.torch-neuronx`` on a legacy host: the XLA line passes, a placeholder is removed,
    a TorchNeuron build is said not to run here (nothing is uninstalled)."""
    assert facts.python is not None
    family, dist = ctx.legacy_family, facts.python.dist("torch-neuronx")
    if dist is None:
        return skip(
            f"No torch-neuronx: TorchNeuron does not run on {family}; {what_runs(family)} does"
        )
    if is_placeholder("torch-neuronx", dist, ctx.releases):
        return fail(
            f"torch-neuronx {dist.version} is the 'WRONG PACKAGE' placeholder from the default "
            "index",
            fix=uninstall(ctx, ["torch-neuronx"]),
            detail=reinstall_note(ctx),
        )
    version = package_version(dist.version)
    if version is not None and version in ctx.release.legacy_xla.versions:
        return ok(f"torch-neuronx {dist.version}: the PyTorch/XLA line, which runs on {family}")
    return fail(
        f"torch-neuronx {dist.version} is TorchNeuron, which does not run on {family} "
        "(Trn2 and Trn3 only)",
        fix=f"Run this environment on a Trn2 or Trn3 instance; on this {family}, use "
        f"{what_runs(family)}.",
    )


def check_torch(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.torch`` on a legacy host: torch matches the XLA torch-neuronx it serves."""
    assert facts.python is not None
    torch, xla = facts.python.dist("torch"), facts.python.dist("torch-neuronx")
    if torch is None:
        return skip(f"No torch: TorchNeuron's pairings do not apply on {ctx.legacy_family}")
    have = package_version(torch.version)
    line = package_version(xla.version) if xla else None
    if line is None or line not in ctx.release.legacy_xla.versions or have is None:
        return skip(
            f"torch {torch.version}: TorchNeuron's pairings do not apply on {ctx.legacy_family}"
        )
    if have.release[:2] == line.release[:2]:
        return ok(f"torch {torch.version} (torch-neuronx {xla.version if xla else ''} is built "
                  f"for PyTorch {line.major}.{line.minor})")  # fmt: skip
    return fail(
        f"torch {torch.version} does not match torch-neuronx {xla.version if xla else ''}, built "
        f"for PyTorch {line.major}.{line.minor}",
        fix=f"{pip(ctx)} check",
        detail="'pip check' names the torch version that torch-neuronx requires; install that one.",
    )


def not_for_this_host(what: str, ctx: Context) -> Verdict:
    """A TorchNeuron-only judgement (its Pythons, its OS list, its compiler pins) on a legacy
    host: skipped, saying why, with no fix that would move the host towards TorchNeuron."""
    return skip(f"{what}: judged for TorchNeuron, which does not run on {ctx.legacy_family}")


def pip(ctx: Context) -> str:
    python = ctx.python or "python"
    if ctx.has_pip:
        return f"{python} -m pip"
    return f"{python} -m ensurepip --default-pip && {python} -m pip"


def uninstall(ctx: Context, names: list[str]) -> str:
    """Remove ``names`` from the target, and install nothing in their place."""
    return f"{pip(ctx)} uninstall -y {' '.join(shlex.quote(n) for n in names)}"


def reinstall_note(ctx: Context) -> str:
    index = ctx.release.index_for("torch-neuronx")
    url = ctx.release.indexes[index].url if index else "the Neuron index"
    return (
        f"Then reinstall what you need of the PyTorch/XLA line from the Neuron index ({url}), "
        "not the default index, which holds only placeholders under these names."
    )
