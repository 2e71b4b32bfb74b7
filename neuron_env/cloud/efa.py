"""The network-interface layout of an EFA instance, derived from the matrix's instance table.

The rule is AWS's recommendation for multi-card EFA instances as aws-parallelcluster implements it
(reference/aws.md §3):

* card 0, device 0: the primary ENA interface (an EFA-only interface cannot be primary);
* card 0, device 1: ``efa-only``, when card 0 supports EFA (``max-efa == network-cards``) and
  holds two interfaces; a card-0 EFA that cannot sit beside the ENA becomes the combined ``efa``
  type at device 0 instead;
* every other EFA card: ``efa-only`` at device 1 (device 0 when a card holds one interface).

The EFA count comes from ``max-efa``, never from the number of cards.
"""

from __future__ import annotations

from typing import Literal

from neuron_env.frozen import frozen
from neuron_env.matrix.model import InstanceType

InterfaceType = Literal["interface", "efa", "efa-only"]


@frozen
class NetworkInterface:
    """One entry of LaunchTemplateData.NetworkInterfaces."""

    network_card_index: int
    device_index: int
    interface_type: InterfaceType


def efa_layout(instance: InstanceType) -> tuple[NetworkInterface, ...]:
    """Every network interface of ``instance``: the primary ENA and its EFA interfaces."""
    card0_has_efa = instance.max_efa > 0 and instance.max_efa == instance.network_cards
    if card0_has_efa and instance.enis_per_card < 2:
        primary = NetworkInterface(0, 0, "efa")
        card0 = [primary]
    else:
        card0 = [NetworkInterface(0, 0, "interface")]
        if card0_has_efa:
            card0.append(NetworkInterface(0, 1, "efa-only"))
    return (*card0, *_other_cards(instance, card0_has_efa))


def _other_cards(instance: InstanceType, card0_has_efa: bool) -> list[NetworkInterface]:
    remaining = instance.max_efa - (1 if card0_has_efa else 0)
    device = 0 if instance.enis_per_card == 1 else 1
    last_card = min(instance.network_cards - 1, remaining)
    return [NetworkInterface(card, device, "efa-only") for card in range(1, last_card + 1)]
