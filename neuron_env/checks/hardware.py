"""Whether a host has any Neuron device: what tells "not ready" from "ready except what needs
Trainium hardware" on a developer's machine or a CI runner, where the environment can be right
while the driver, device and instance checks can never pass."""

from __future__ import annotations

from collections.abc import Iterable

from neuron_env.checks.model import Check
from neuron_env.facts import HostFacts
from neuron_env.matrix.model import Release


def has_neuron_device(facts: HostFacts, release: Release) -> bool:
    """Any sign of Neuron hardware: the driver loaded, ``/dev/neuron*`` nodes, the driver's sysfs
    devices, or an instance type of a Neuron family the matrix knows (a Trn2 whose driver is not
    loaded has no ``/dev/neuron*``, yet its devices are there: its checks fail, they do not wait).

    Facts that could not be probed count as a device: nothing is excused on a guess.
    """
    driver, ec2 = facts.driver, facts.ec2
    if driver is None or ec2 is None:
        return True
    if driver.module_loaded or driver.devices or driver.sysfs:
        return True
    instance = ec2.instance_type
    return instance is not None and release.family_of(instance) in release.families


def waiting_for_hardware(
    checks: Iterable[Check], facts: HostFacts, release: Release
) -> tuple[str, ...]:
    """The ids of ``checks`` that need Trainium hardware, when this host has no Neuron device."""
    if has_neuron_device(facts, release):
        return ()
    return tuple(c.id for c in checks if c.needs_hardware)
