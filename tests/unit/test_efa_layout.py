"""The EFA interface layout comes from the matrix's instance facts (the pcluster rule)."""

from __future__ import annotations

from neuron_env.cloud.efa import NetworkInterface, efa_layout
from neuron_env.matrix import load_matrix
from neuron_env.matrix.model import InstanceType
from tests.support.efa import efa_count


def instance(cards: int, max_efa: int, enis_per_card: int) -> InstanceType:
    return InstanceType("trn2", 1, 8, 64, cards, max_efa, enis_per_card, ("on-demand",))


def test_trn2_48xlarge_gets_the_ena_and_sixteen_efa_only_interfaces() -> None:
    trn2 = load_matrix().get("2.33.1").instance_types["trn2.48xlarge"]
    layout = efa_layout(trn2)
    assert layout[:2] == (NetworkInterface(0, 0, "interface"), NetworkInterface(0, 1, "efa-only"))
    assert layout[2:] == tuple(NetworkInterface(card, 1, "efa-only") for card in range(1, 16))
    assert len(layout) == 17 and efa_count(layout) == 16


def test_trn2_3xlarge_has_one_card_with_the_ena_and_one_efa() -> None:
    trn2 = load_matrix().get("2.33.1").instance_types["trn2.3xlarge"]
    assert efa_layout(trn2) == (
        NetworkInterface(0, 0, "interface"),
        NetworkInterface(0, 1, "efa-only"),
    )


def test_cards_that_hold_one_interface_get_the_combined_efa_on_card_0() -> None:
    layout = efa_layout(instance(cards=4, max_efa=4, enis_per_card=1))
    assert layout == (
        NetworkInterface(0, 0, "efa"),
        *(NetworkInterface(card, 0, "efa-only") for card in (1, 2, 3)),
    )


def test_efa_count_comes_from_max_efa_not_from_the_card_count() -> None:
    # Card 0 does not support EFA when max-efa < network-cards: EFA goes on the next cards only.
    layout = efa_layout(instance(cards=8, max_efa=4, enis_per_card=2))
    assert layout[0] == NetworkInterface(0, 0, "interface")
    assert [n.network_card_index for n in layout[1:]] == [1, 2, 3, 4]
    assert efa_count(layout) == 4


def test_an_instance_without_efa_has_only_its_primary_interface() -> None:
    assert efa_layout(instance(cards=1, max_efa=0, enis_per_card=2)) == (
        NetworkInterface(0, 0, "interface"),
    )
