"""The install plan: every pin routed to exactly one index, overrides, guards."""

from __future__ import annotations

import pytest

from neuron_env.errors import BadInput
from neuron_env.install.plan import Mirrors
from tests.support.install_fixtures import plan_for


def test_neuron_packages_route_to_the_neuron_index_and_torch_to_pytorch() -> None:
    plan = plan_for(release="2.33.0")
    routes = {p.name: plan.route(p.route).url for p in plan.packages}
    assert routes == {
        "torch": "https://download.pytorch.org/whl/cpu",
        "torch-neuronx": "https://pip.repos.neuron.amazonaws.com",
        "neuronx-cc": "https://pip.repos.neuron.amazonaws.com",
        "nki": "https://pip.repos.neuron.amazonaws.com",
    }
    assert plan.requirements == (
        "torch==2.14.0",
        "torch-neuronx==2.14.3.0.*",
        "neuronx-cc==2.28.7631.0",
        "nki==0.7.0",
    )


def test_everything_else_comes_from_the_default_index_of_the_backend() -> None:
    plan = plan_for()
    assert plan.default_route.url is None
    assert plan.default_route.serves == ()


def test_mirrors_replace_the_matrix_urls_and_say_so() -> None:
    plan = plan_for(
        mirrors=Mirrors(
            neuron_index="https://artifactory.example/neuron/simple/",
            pytorch_index="https://artifactory.example/pytorch/simple",
            index_url="https://artifactory.example/pypi/simple",
        )
    )
    neuron = plan.route("neuron")
    assert (neuron.url, neuron.origin) == (
        "https://artifactory.example/neuron/simple",
        "--neuron-index",
    )
    assert plan.route("pytorch-cpu").origin == "--pytorch-index"
    assert plan.default_route.url == "https://artifactory.example/pypi/simple"


@pytest.mark.parametrize("url", ["pip.example/simple", "ftp://mirror/simple", "https://"])
def test_an_override_that_is_not_an_index_url_is_bad_input(url: str) -> None:
    with pytest.raises(BadInput, match="is not an index URL"):
        plan_for(mirrors=Mirrors(neuron_index=url))


def test_a_wheelhouse_serves_every_package() -> None:
    plan = plan_for(wheelhouse="/media/wheels", offline=True)
    assert {p.route for p in plan.packages} == {"wheelhouse"}
    assert [r.name for r in plan.routes] == ["wheelhouse"]


def test_guards_name_the_neuron_packages_the_plan_does_not_pin() -> None:
    plan = plan_for()
    assert plan.guards.neuron_names == ("libneuronxla", "torchtitan-neuron")
    assert plan.guards.placeholders["nki"] == ("0.0.1",)
    assert plan.guards.legacy_xla == "<2.10"


def test_an_unconfirmed_pin_stays_marked() -> None:
    plan = plan_for(release="2.34.0")
    nki = plan.package("nki")
    assert (nki.spec, nki.confirmed) == ("==0.8.0", False)


def test_an_upgrade_records_the_installed_versions_and_says_how_it_works() -> None:
    plan = plan_for(action="upgrade", installed={"torch-neuronx": "2.13.3.0.1"})
    assert plan.package("torch-neuronx").installed == "2.13.3.0.1"
    assert "install.upgrade" in {n.code for n in plan.notes}


def test_a_pin_accepts_the_local_cpu_build() -> None:
    torch = plan_for().package("torch")
    assert torch.allows("2.14.0+cpu")
    assert not torch.allows("2.14.1")
