"""The shipped matrix files: they load, are in canonical form, and say what the references say."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from neuron_env.matrix import Request, load_matrix, load_release_file, resolve_target
from neuron_env.matrix.load import read_toml
from neuron_env.matrix.model import Release
from neuron_env.resources import shipped_matrix_dir
from neuron_env.schema import toml_key

SHIPPED = sorted(shipped_matrix_dir().glob("*.toml"))
MATRIX = load_matrix()


def test_the_required_releases_ship() -> None:
    assert {"2.33.0", "2.33.1", "2.34.0"} <= {p.stem for p in SHIPPED}


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_every_shipped_release_loads(path: Path) -> None:
    release = load_release_file(path)
    assert str(release.version) == path.stem


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_shipped_files_are_in_canonical_form(path: Path) -> None:
    """Sections in schema order, tables sorted, every source used, tidy whitespace."""
    text = path.read_text(encoding="utf-8")
    assert "\r" not in text and "\t" not in text
    assert text.endswith("\n") and not text.endswith("\n\n")
    assert not [n for n, line in enumerate(text.splitlines(), 1) if line != line.rstrip()]
    assert re.search(r"^schema = 1$", text, re.MULTILINE)
    assert text.index("schema = 1") < text.index("[release]")

    data = read_toml(path)
    order = [toml_key(f) for f in dataclasses.fields(Release) if f.name != "origin"]
    present = [key for key in data if key in order]
    assert present == sorted(present, key=order.index), "top-level sections out of schema order"
    for section in ("packages", "placeholders", "os", "chips", "families", "instance-types"):
        assert list(data[section]) == sorted(data[section]), f"[{section}] entries not sorted"
    for section in ("system-packages", "docs", "sources"):
        assert list(data[section]) == sorted(data[section]), f"[{section}] entries not sorted"
    assert list(data.get("companions", {})) == sorted(data.get("companions", {}))
    assert list(data.get("libraries", {})) == sorted(data.get("libraries", {}))
    before, _, rest = text.partition("\n[sources]\n")
    after = rest.partition("\n\n")[2]  # tables after [sources] (companions) cite sources too
    used = set(re.findall(r'"([a-z0-9.-]+)"', before + after))
    unused = set(data["sources"]) - used
    assert not unused, f"sources defined but never cited: {sorted(unused)}"


def test_every_pairing_resolves_for_each_python_and_each_os_with_wheels() -> None:
    resolved = 0
    for release in MATRIX.releases:
        wheel_os = [os_id for os_id, entry in release.os.items() if entry.wheels]
        for pairing in release.pairings:
            for python in pairing.python:
                for os_id in wheel_os:
                    request = Request(
                        pairing.torch_minor,
                        python,
                        os_id,
                        "x86_64",
                        "trn2.48xlarge",
                        str(release.version),
                    )
                    target = resolve_target(MATRIX, request)
                    assert target.pin("torch").spec == f"=={pairing.torch}"
                    assert target.pin("torch-neuronx").spec == f"=={pairing.torch_neuronx}.*"
                    assert not [n for n in target.warnings if n.code.startswith("os.no-wheels")]
                    resolved += 1
    assert resolved >= 3 * 3  # every release, every Python


def test_2_33_0_keeps_support_and_wheels_as_separate_facts_with_both_sources() -> None:
    release = MATRIX.get("2.33.0")
    jammy = release.os["ubuntu-22.04"]
    said = {claim.source: claim.support for claim in jammy.claims if claim.support}
    assert said["torchneuron-notes"] == "end-of-support"  # the docs
    assert said["gh-torch-neuronx"] == "supported"  # the GitHub release
    assert jammy.support == "disputed" and not jammy.wheels
    noble = release.os["ubuntu-24.04"]
    assert noble.support == "supported" and not noble.wheels
    assert "DLAMI" in noble.instead and "source" in noble.instead
    assert release.os["ubuntu-26.04"].wheels


def test_unconfirmed_facts_stay_marked_unconfirmed() -> None:
    r234 = MATRIX.get("2.34.0")
    assert not r234.packages["neuronx-cc"].confirmed
    assert not r234.system_packages["aws-neuronx-dkms"].confirmed
    assert r234.system_packages["aws-neuronx-dkms"].version is None
    r233 = MATRIX.get("2.33.0")
    assert not r233.os["amzn-2023"].confirmed
    assert not next(d for d in r233.dlamis if d.os == "ubuntu-26.04").ssm_confirmed
    assert not next(lim for lim in r233.limitations if lim.id == "float64").confirmed


def test_2_33_1_changes_system_packages_but_not_torchneuron() -> None:
    before, after = MATRIX.get("2.33.0"), MATRIX.get("2.33.1")
    assert before.pairings[0].torch_neuronx == after.pairings[0].torch_neuronx
    assert str(after.system_packages["aws-neuronx-dkms"].version) == "2.31.8.0"
    assert str(before.system_packages["aws-neuronx-dkms"].version) == "2.31.7.0"


def test_legacy_xla_line_and_placeholders_are_told_apart_from_native_builds() -> None:
    from packaging.version import Version

    release = MATRIX.get("2.33.0")
    assert Version("2.9.0.2.15.32035") in release.legacy_xla.versions
    assert Version("2.14.3.0") not in release.legacy_xla.versions
    assert release.placeholders["torch-neuronx"].versions == (Version("1.0"),)
    assert release.placeholders["neuronx-cc"].versions == (Version("1.0.post1"),)
    assert release.placeholders["nki"].versions == (Version("0.0.1"),)


def test_instance_facts_derive_logical_cores_and_device_memory() -> None:
    release = MATRIX.get("2.33.0")
    big = release.instance_types["trn2.48xlarge"]
    chip = release.chips["trainium2"]
    assert big.chips * chip.logical_cores() == 64
    assert big.chips * chip.logical_cores(1) == 128
    assert big.chips * chip.memory_gib == 1536
    assert (big.network_cards, big.max_efa) == (16, 16)
    assert not release.families["trn1"].native


def test_companions_say_what_the_references_say() -> None:
    for version in ("2.33.0", "2.33.1"):
        titan = MATRIX.get(version).companions["torchtitan-neuron"]
        assert (str(titan.version), titan.torch, titan.index) == (
            "0.2.2+neuron.1",
            ("2.14",),
            "neuron",
        )
        assert titan.confirmed and not titan.families_confirmed  # no source names its families
    later = MATRIX.get("2.34.0").companions
    assert str(later["torchtitan-neuron"].version) == "0.2.2+neuron.2"
    assert not later["torchtitan-neuron"].confirmed  # named by the TorchAO pages only
    torchao = later["torchao-neuron"]
    assert (str(torchao.version), torchao.families, torchao.import_name) == (
        "0.18.0+neuron.1",
        ("trn3",),
        "torchao",
    )
    assert torchao.conflicts == ("torchao",) and torchao.confirmed


def test_2_34_pairs_pytorch_2_13_too_with_its_pythons_unconfirmed() -> None:
    release = MATRIX.get("2.34.0")
    pairings = {p.torch_minor: p for p in release.pairings}
    assert str(pairings["2.13"].torch_neuronx) == "2.13.3.1"
    assert str(pairings["2.14"].torch_neuronx) == "2.14.3.1"
    assert not pairings["2.13"].confirmed and "Python" in pairings["2.13"].note
    source = release.sources[pairings["2.13"].sources[0]]
    assert source.endswith("aws-neuron/torch-neuronx/releases/tag/v2.34.0")
    assert release.pairings[-1].torch_minor == "2.14"  # still the default PyTorch


def test_2_34_narrows_the_recompile_limitation_without_dropping_it() -> None:
    release = MATRIX.get("2.34.0")
    shapes = next(lim for lim in release.limitations if lim.id == "compile-dynamic-shapes")
    assert "compiles again" in shapes.summary
    assert "MoE models no longer recompile" in shapes.note
    assert release.companions["torchtitan-neuron"].families_confirmed
    assert any("torch.accelerator" in note for note in release.release.notes)
