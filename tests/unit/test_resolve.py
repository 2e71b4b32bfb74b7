"""Resolution: requests to exact pins, routed indexes and notes; unsupported requests explain."""

from __future__ import annotations

import dataclasses
import re

import pytest

from neuron_env.errors import EXIT_BAD_INPUT, BadInput, UnknownRelease, UnsupportedCombination
from neuron_env.matrix import Request, load_matrix, resolve_target
from neuron_env.matrix.load import Matrix

MATRIX = load_matrix()


def resolve(**kwargs: str) -> object:
    return resolve_target(MATRIX, Request(**kwargs))


def test_issue_example_pins_torch_and_the_torch_neuronx_family() -> None:
    target = resolve_target(
        MATRIX, Request("2.14", python="3.12", os="ubuntu-26.04", release="2.33.0")
    )
    assert target.pin("torch").requirement == "torch==2.14.0"
    assert target.pin("torch-neuronx").requirement == "torch-neuronx==2.14.3.0.*"
    assert target.pin("neuronx-cc").requirement == "neuronx-cc==2.28.7631.0"
    assert target.pin("nki").requirement == "nki==0.7.0"
    assert target.warnings == ()


def test_each_pin_names_the_only_index_it_may_come_from() -> None:
    target = resolve_target(MATRIX, Request("2.14", release="2.33.0"))
    assert target.pin("torch").index == "pytorch-cpu"
    assert {target.pin(n).index for n in ("torch-neuronx", "neuronx-cc", "nki")} == {"neuron"}
    assert target.pin("nki").index_url == MATRIX.get("2.33.0").indexes["neuron"].url


def test_ubuntu_24_04_still_answers_but_warns_there_are_no_wheels_and_what_to_do() -> None:
    target = resolve_target(
        MATRIX, Request("2.14", python="3.12", os="ubuntu-24.04", release="2.33.0")
    )
    (warning,) = target.warnings
    assert warning.code == "os.no-wheels"
    assert "no torch-neuronx pip wheels for Ubuntu 24.04" in warning.message
    assert "DLAMI" in warning.message and "from source" in warning.message


def test_ubuntu_22_04_warns_that_the_sources_disagree() -> None:
    target = resolve_target(MATRIX, Request("2.13", os="ubuntu-22.04", release="2.33.0"))
    assert [w.code for w in target.warnings] == ["os.disputed"]


def test_the_latest_release_is_the_default() -> None:
    assert resolve_target(MATRIX, Request("2.14")).release == MATRIX.latest().version.public


def test_unknown_torch_lists_the_supported_ones() -> None:
    with pytest.raises(UnsupportedCombination) as caught:
        resolve_target(MATRIX, Request("2.15", release="2.33.0"))
    assert "2.13 and 2.14" in caught.value.message
    assert caught.value.exit_code == EXIT_BAD_INPUT


def test_torch_paired_only_in_an_older_release_points_there() -> None:
    """2.34.0 pairs 2.13 as well; a 2.34.0 that did not must send a 2.13 request to 2.33.1."""
    newest = MATRIX.get("2.34.0")
    only_2_14 = tuple(p for p in newest.pairings if not str(p.torch).startswith("2.13"))
    older = [r for r in MATRIX.releases if r is not newest]
    without = Matrix((*older, dataclasses.replace(newest, pairings=only_2_14)))
    with pytest.raises(UnsupportedCombination) as caught:
        resolve_target(without, Request("2.13", release="2.34.0"))
    assert caught.value.hint is not None and "--release 2.33.1" in caught.value.hint


def test_torch_patch_release_other_than_the_paired_one_is_refused() -> None:
    with pytest.raises(UnsupportedCombination, match=re.escape("exactly PyTorch 2.14.0")):
        resolve_target(MATRIX, Request("2.14.1", release="2.33.0"))


def test_unsupported_python_lists_the_supported_range() -> None:
    with pytest.raises(UnsupportedCombination, match=re.escape("3.12–3.14, not 3.11")):
        resolve_target(MATRIX, Request("2.14", python="3.11"))


def test_trn1_is_refused_because_the_native_backend_does_not_support_it() -> None:
    with pytest.raises(UnsupportedCombination) as caught:
        resolve_target(MATRIX, Request("2.14", instance_type="trn1.32xlarge"))
    assert "Trn1 is not supported by the native backend" in caught.value.message


def test_a_non_trainium_instance_is_refused() -> None:
    with pytest.raises(UnsupportedCombination, match="not a Trainium instance"):
        resolve_target(MATRIX, Request("2.14", instance_type="p5.48xlarge"))


def test_an_unlisted_size_of_a_supported_family_warns() -> None:
    target = resolve_target(MATRIX, Request("2.14", instance_type="trn3.48xlarge"))
    assert "instance.unlisted" in [w.code for w in target.warnings]


def test_aarch64_is_refused_and_amd64_means_x86_64() -> None:
    with pytest.raises(UnsupportedCombination, match="x86_64 only"):
        resolve_target(MATRIX, Request("2.14", arch="aarch64"))
    assert resolve_target(MATRIX, Request("2.14", arch="amd64")).arch == "x86_64"


def test_unknown_os_lists_the_known_ones() -> None:
    with pytest.raises(UnsupportedCombination, match=re.escape("ubuntu-26.04")):
        resolve_target(MATRIX, Request("2.14", os="debian-12"))


def test_unknown_release_lists_the_known_ones() -> None:
    with pytest.raises(UnknownRelease, match=re.escape("2.33.0, 2.33.1, 2.34.0")):
        resolve_target(MATRIX, Request("2.14", release="2.40.0"))


def test_a_version_that_is_not_a_version_is_bad_input() -> None:
    with pytest.raises(BadInput, match="not a version"):
        resolve_target(MATRIX, Request("latest"))


def test_unconfirmed_pins_of_2_34_are_warned_about() -> None:
    target = resolve_target(MATRIX, Request("2.14", release="2.34.0"))
    unconfirmed = [w.message for w in target.warnings if w.code == "pin.unconfirmed"]
    assert unconfirmed == [
        "2.34.0: 2 pins unconfirmed — see 'neuron-env matrix show --release 2.34.0'"
    ]
    assert {p.name for p in target.pins if not p.confirmed} == {"neuronx-cc", "nki"}
    assert target.pin("torch-neuronx").requirement == "torch-neuronx==2.14.3.1.*"


def test_companions_ride_only_on_the_pytorch_and_family_they_support() -> None:
    titan = resolve_target(MATRIX, Request("2.14", release="2.33.1")).companions
    assert [c.requirement for c in titan] == ["torchtitan-neuron==0.2.2+neuron.1"]
    assert titan[0].index_url == MATRIX.get("2.33.1").indexes["neuron"].url
    assert resolve_target(MATRIX, Request("2.13", release="2.33.1")).companions == ()
    trn3 = resolve_target(MATRIX, Request("2.14", release="2.34.0", instance_type="trn3.3xlarge"))
    assert [c.name for c in trn3.companions] == ["torchao-neuron", "torchtitan-neuron"]
    trn2 = resolve_target(MATRIX, Request("2.14", release="2.34.0", instance_type="trn2.48xlarge"))
    assert [c.name for c in trn2.companions] == ["torchtitan-neuron"]  # TorchAO: Trn3 only


def test_the_unconfirmed_pins_note_names_neuron_env_as_its_caller_says() -> None:
    program = "/opt/tools/bin/neuron-env"
    target = resolve_target(MATRIX, Request("2.14", release="2.34.0"), program=program)
    (note,) = [w.message for w in target.warnings if w.code == "pin.unconfirmed"]
    assert note.endswith(f"see '{program} matrix show --release 2.34.0'")
