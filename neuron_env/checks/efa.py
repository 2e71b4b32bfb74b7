"""EFA: the network multi-node collectives run on. A Trn2 job on one node works without it;
across nodes the collectives need the instance's EFA interfaces and aws-neuronx-collectives."""

from __future__ import annotations

import shlex

from neuron_env.checks.cores import instance_type
from neuron_env.checks.host_kind import driver_step, in_pod
from neuron_env.checks.model import Context, Verdict, ok, skip, warn
from neuron_env.facts import HostFacts

COLLECTIVES = "aws-neuronx-collectives"
NO_MULTI_NODE = "single-node jobs work, multi-node collectives will not"
POD_EFA = (
    "Request the EFA interfaces in the pod spec: resources.limits 'vpc.amazonaws.com/efa: N', "
    "with the EFA device plugin on the node."
)
EFA_INSTALLER = (
    "Install the EFA driver with the AWS EFA installer (aws-efa-installer-latest.tar.gz, its "
    "signature checked), then 'sudo bash efa_installer.sh --yes'."
)


def check_efa(facts: HostFacts, ctx: Context) -> Verdict:
    """``platform.efa``: on an instance type with EFA, its EFA devices (/sys/class/infiniband/*
    bound to the efa driver) are all there and aws-neuronx-collectives is installed."""
    assert facts.system is not None
    name = instance_type(facts)
    if name is None:
        return skip(
            "Instance type unknown (neither IMDS nor the driver named it); EFA not compared"
        )
    if "." not in name:  # the driver's sysfs names the family (Trn2), never the size
        return skip(
            f"Instance type unknown: the driver names the family {name}, not the size, and "
            "IMDS did not answer; EFA not compared"
        )
    known = ctx.release.instance_types.get(name)
    if known is None:
        return skip(f"{name} is not in the matrix's instance types; EFA not compared")
    if known.max_efa == 0:
        return ok(f"{name} has no EFA: single-node only")
    bound = facts.system.efa_bound
    if bound is None:
        return skip("EFA devices were not collected (a snapshot from an older neuron-env)")
    collectives = _collectives_missing(facts)
    if not bound:
        return warn(f"No EFA device of the {known.max_efa} a {name} can have: {NO_MULTI_NODE}",
                    fix=_no_devices_fix(facts, _launch_with_efa(name, ctx)))  # fmt: skip
    if collectives:
        return warn(f"{COLLECTIVES} is not installed: {NO_MULTI_NODE}",
                    fix=driver_step(facts, f"sudo apt-get install -y {COLLECTIVES}"))  # fmt: skip
    if len(bound) < known.max_efa:
        return warn(
            f"{len(bound)} of the {known.max_efa} EFA interfaces a {name} can have: multi-node "
            "collectives get that share of the bandwidth",
            fix=POD_EFA if in_pod(facts) else _launch_with_efa(name, ctx),
        )
    return ok(f"{len(bound)} EFA devices (all a {name} can have), {COLLECTIVES} installed")


def _launch_with_efa(instance: str, ctx: Context) -> str:
    """The launch-template command that adds every EFA interface, with this host's values (the
    neuron-env source is the one value the host cannot know: its configured index). A type the
    native backend does not run on (Trn1) gets the layout in words: neuron-env's templates are
    TorchNeuron's."""
    known = ctx.release.instance_types[instance]
    family = ctx.release.families.get(known.family)
    if family is None or not family.native:
        return (
            f"Launch with an EFA interface on each of the {known.network_cards} network cards of "
            f"a {instance} ({known.max_efa} in all), as the Neuron multi-node setup guide for "
            "this instance type lays them out."
        )
    target = ctx.fix_release()
    minor = ctx.pairing.torch_minor if ctx.pairing else None
    if minor is None or target.pairing_for(minor) is None:
        minor = target.pairings[-1].torch_minor
    release = str(target.version)
    render = [ctx.program, "launch-template render --instance-type", shlex.quote(instance),
              "--torch", minor, "--release", release, "--neuron-env-source pypi"]  # fmt: skip
    return (
        "Launch with an EFA interface on every network card: "
        f"'{' '.join(render)}' adds them for this instance type."
    )


def _collectives_missing(facts: HostFacts) -> bool:
    """Known only where dpkg's database is (an empty one is no database: not judged)."""
    assert facts.system is not None
    packages = facts.system.packages
    return bool(packages) and COLLECTIVES not in packages


def _no_devices_fix(facts: HostFacts, launch: str) -> str:
    assert facts.system is not None
    if in_pod(facts):
        return POD_EFA
    if facts.system.efa_devices:  # InfiniBand devices, none bound: the EFA driver is missing
        return driver_step(facts, EFA_INSTALLER)
    return launch
