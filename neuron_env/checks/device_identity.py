"""What the Neuron driver says the host is: its sysfs names the instance *family* and the chip,
never a size. Without IMDS (a container with hop limit 1, IMDS turned off) this is what is known.

The driver writes ``/sys/devices/virtual/neuron_device/neuronN/info/architecture/`` from a fixed
table per chip generation (aws-neuron/aws-neuron-driver, ``v1/neuron_dhal_v1.c``,
``v2/neuron_dhal_v2.c``, ``v3/neuron_dhal_v3.c``; ``neuron_sysfs_metrics.c`` prefixes the device's
``arch_type`` with ``ND`` and a core's with ``NC``), as of driver 2.24.7.0:

==========  ===============  =============  ==============
chip        ``instance_type``  ``device_name``  ``arch_type``
==========  ===============  =============  ==============
Inferentia  Inf1             Inferentia     NDv1
Trainium    Trn1 (also Trn1n) Trainium1     NDv2
Inferentia2 Inf2             Inferentia2    NDv3
Trainium2   Trn2 (also Trn2u) Trainium2     NDv3
==========  ===============  =============  ==============

Trainium3's spelling is not in that source (NOT CONFIRMED): an ``instance_type`` this table does not
hold is reported as read, never guessed into a family. docs/host-shapes.md has the whole story.
"""

from __future__ import annotations

from neuron_env.facts import HostFacts
from neuron_env.frozen import frozen

# The driver's instance_type -> the matrix's family key (matrices/*.toml [families]).
SYSFS_FAMILIES = {"Inf1": "inf1", "Inf2": "inf2", "Trn1": "trn1", "Trn2": "trn2"}


@frozen
class DriverIdentity:
    """The family and chip the driver's sysfs names, and how many devices it lists."""

    instance_type: str
    device_name: str | None
    arch_type: str | None
    devices: int

    @property
    def family(self) -> str | None:
        """The matrix family (``trn2``), or None for a spelling neuron-env does not know."""
        return SYSFS_FAMILIES.get(self.instance_type)

    def describe(self) -> str:
        """``Trn2 (Trainium2, NDv3, 16 devices)``: what was read, as read."""
        parts = [p for p in (self.device_name, self.arch_type) if p]
        parts.append(f"{self.devices} device" + ("" if self.devices == 1 else "s"))
        return f"{self.instance_type} ({', '.join(parts)})"


def driver_identity(facts: HostFacts) -> DriverIdentity | None:
    """The first sysfs device's architecture names, with the device count; None without any."""
    sysfs = facts.driver.sysfs if facts.driver else ()
    first = next((d for d in sysfs if d.instance_type), None)
    if first is None or first.instance_type is None:
        return None
    return DriverIdentity(first.instance_type, first.device_name, first.arch_type, len(sysfs))
