"""Where each package may come from, and the checks on a resolution and on the live environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env.errors import BadInput
from neuron_env.install import live
from neuron_env.install.backends import PipBackend, UvBackend, choose_backend
from neuron_env.install.backends.uv import misrouted, parse_resolution, project_toml
from neuron_env.install.plan import InstallPlan, Mirrors, legacy_leftovers
from tests.support.install_fixtures import plan_for

OUTPUTS = Path(__file__).resolve().parents[1] / "data" / "install" / "backend-output"
NEURON, PYTORCH = "http://127.0.0.1:8101/simple", "http://127.0.0.1:8102/simple"


def routed_plan() -> InstallPlan:
    return plan_for(mirrors=Mirrors(neuron_index=NEURON, pytorch_index=PYTORCH))


@pytest.mark.parametrize(
    ("name", "neuron"),
    [
        ("libneuronxla", True), ("neuronx-hwm", True), ("aws-neuronx-runtime-discovery", True),
        ("jax-neuronx", True), ("vllm-neuron", True), ("nki-library", True),
        ("Torch_Neuronx", True), ("torch", False), ("filelock", False), ("torch-xla", False),
        ("neuron-cc", True), ("neuronperf", True), ("nkipy", True), ("nrtpy", True),
        ("nki_foo", True), ("libneuronfoo", True), ("aws-neuron-tools", True),
    ],
)  # fmt: skip
def test_neuron_names_pinned_or_not(name: str, neuron: bool) -> None:
    assert routed_plan().guards.is_neuron(name) is neuron


def test_an_unpinned_neuron_dependency_from_the_default_index_is_misrouted() -> None:
    resolution = parse_resolution((OUTPUTS / "uv-compile-annotated.txt").read_text())
    assert [r.name for r in resolution] == [
        "filelock", "libneuronxla", "neuronx-cc", "nki", "torch", "torch-neuronx",
    ]  # fmt: skip
    (wrong,) = misrouted(routed_plan(), resolution)
    default = "http://127.0.0.1:44353/simple"
    assert (wrong.name, wrong.version, wrong.index) == ("libneuronxla", "1.0", default)


def test_a_routed_name_is_pinned_to_the_neuron_index_in_the_project() -> None:
    text = project_toml(routed_plan(), ("libneuronxla",))
    assert '"libneuronxla" = { index = "neuron" }' in text
    assert '"libneuronxla"]' in text  # a dependency, so that the source applies


def test_changes_of_the_live_environment_are_named(tmp_path: Path) -> None:
    site = tmp_path / "lib" / "python3.12" / "site-packages"
    site.mkdir(parents=True)
    (site / "torch-2.13.0.dist-info").mkdir()
    (site / "torch-2.13.0.dist-info" / "RECORD").write_text("torch/__init__.py,,\n")
    before = live.snapshot(tmp_path)
    (site / "extra_tool-1.0.dist-info").mkdir()
    (site / "torch-2.13.0.dist-info" / "RECORD").write_text("torch/__init__.py,sha256=x,1\n")
    assert live.changes(before, live.snapshot(tmp_path)) == [
        "extra-tool 1.0 was installed",
        "torch 2.13.0 was reinstalled or modified",
    ]
    assert live.changes(before, before) == []


def test_the_legacy_stack_goes_only_from_a_legacy_environment() -> None:
    legacy = {"torch-neuronx": "2.9.0.2.15.32035", "neuronx-distributed": "0.15", "numpy": "2.1"}
    assert legacy_leftovers(legacy, "<2.10") == ("neuronx-distributed",)
    native = {"torch-neuronx": "2.14.3.0.1", "neuronx-distributed": "0.15"}
    assert legacy_leftovers(native, "<2.10") == ()
    leftover = {"torch-neuronx": "2.14.3.0.1", "torch-xla": "2.9.0"}
    assert legacy_leftovers(leftover, "<2.10") == ("torch-xla",)


def uv_reporting(version: str, where: Path) -> Path:
    """A real executable that answers ``uv --version`` as that uv release does."""
    uv = where / f"uv-{version}" / "uv"
    uv.parent.mkdir()
    uv.write_text(f"#!/bin/sh\necho 'uv {version} (x86_64-unknown-linux-gnu)'\n")
    uv.chmod(0o755)
    return uv


def test_a_uv_too_old_for_pylock_files_is_not_used(tmp_path: Path) -> None:
    new, old = uv_reporting("0.13.9", tmp_path), uv_reporting("0.5.1", tmp_path)
    assert isinstance(choose_backend("auto", lambda: new), UvBackend)
    assert isinstance(choose_backend("auto", lambda: old), PipBackend)
    with pytest.raises(BadInput, match=r"is uv 0\.5\.1; neuron-env needs uv 0\.6\.15 or newer"):
        choose_backend("uv", lambda: old)
