"""What the EFA layout tests count: the product renders the layout, it never counts it."""

from __future__ import annotations

from neuron_env.cloud.efa import NetworkInterface


def efa_count(layout: tuple[NetworkInterface, ...]) -> int:
    """How many EFA devices the layout gives the instance."""
    return sum(1 for nic in layout if nic.interface_type != "interface")
