"""The user's packages judged against the shipped releases: what is pinned, routed or refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env.errors import BadInput
from neuron_env.install.user_packages import conflict_sentence, gather, read_requirements_file
from neuron_env.install.user_policy import Classified, classify
from neuron_env.matrix import Request, load_matrix, resolve_target

MATRIX = load_matrix()


def judged(*packages: str, release: str = "2.34.0", torch: str = "2.14") -> Classified:
    target = resolve_target(MATRIX, Request(torch=torch, python="3.12", release=release))
    return classify(MATRIX, MATRIX.get(release), target, gather(packages, (), torch), python="3.12")


def refusal(*packages: str, release: str = "2.34.0", torch: str = "2.14") -> str:
    with pytest.raises(BadInput) as caught:
        judged(*packages, release=release, torch=torch)
    return " ".join(f"{caught.value.message} {caught.value.hint}".split())


def test_companions_are_pinned_to_the_release_and_routed_to_the_neuron_index() -> None:
    found = {p.name: p for p in judged("torchtitan-neuron", "torchao-neuron>=0.1").pins}
    assert found["torchtitan-neuron"].spec == "==0.2.2+neuron.2"
    assert found["torchao-neuron"].spec == "==0.18.0+neuron.1"
    assert {p.index for p in found.values()} == {"neuron"}
    older = judged("torchtitan-neuron", release="2.33.0").pins
    assert [p.spec for p in older] == ["==0.2.2+neuron.1"]


def test_other_packages_come_from_the_default_index_with_their_specifiers() -> None:
    classified = judged("transformers[torch]>=4.50", "transformers<5", "datasets")
    pins = {p.name: p for p in classified.pins}
    assert pins["transformers"].index is None
    assert set(pins["transformers"].spec.split(",")) == {">=4.50", "<5"}
    assert pins["datasets"].spec == ""
    assert classified.extras == {"transformers": "[torch]"}
    assert "command line" in classified.requested["datasets"]


def test_a_core_name_stays_the_release_pin_and_a_specifier_excluding_it_is_refused() -> None:
    assert judged("torch>=2.14").pins == ()  # the plan pins it already
    message = refusal("torch>=2.15")
    assert "'torch>=2.15' (command line) excludes torch 2.14.0" in message
    assert "Neuron 2.34.0 pins torch 2.14.0" in message


def test_a_wildcard_pin_is_checked_against_the_versions_the_user_names() -> None:
    assert judged("torch-neuronx==2.14.3.1", release="2.34.0").pins == ()
    assert judged("torch-neuronx>=2.14", release="2.33.0").pins == ()
    message = refusal("torch-neuronx>=2.15", release="2.33.0")
    assert "excludes torch-neuronx ==2.14.3.0.*" in message


def test_upstream_torchao_is_refused_beside_torchao_neuron() -> None:
    message = refusal("torchao==0.18.0")
    assert "cannot share an environment with torchao-neuron (TorchAO Neuron)" in message
    assert "import package 'torchao'" in message


def test_torchao_neuron_is_refused_beside_an_installed_upstream_torchao() -> None:
    target = resolve_target(MATRIX, Request(torch="2.14", python="3.12", release="2.34.0"))
    requirements = gather(["torchao-neuron"], (), "2.14")
    with pytest.raises(BadInput) as caught:
        classify(
            MATRIX, MATRIX.get("2.34.0"), target, requirements, installed={"torchao": "0.18.0"}
        )
    message = " ".join(f"{caught.value.message} {caught.value.hint}".split())
    assert "the environment holds torchao 0.18.0" in message
    assert "pip uninstall torchao" in message


def test_xla_era_names_are_refused_with_what_to_use_instead() -> None:
    for name in ("neuronx-distributed", "neuronx-distributed-inference", "transformers-neuronx"):
        message = refusal(name)
        assert "legacy PyTorch/XLA stack" in message
        assert "Use instead:" in message
    assert "TorchNeuron itself" in refusal("torch-xla")


def test_a_companion_for_another_pytorch_names_the_one_it_runs_on() -> None:
    message = refusal("torchtitan-neuron", torch="2.13", release="2.33.0")
    assert "Neuron 2.33.0 ships TorchTitan Neuron for PyTorch 2.14 only" in message
    assert "--torch 2.14" in message


def test_a_placeholder_only_name_is_refused_naming_its_placeholder() -> None:
    message = refusal("nkipy")
    assert "nkipy is a Neuron package name" in message
    assert "'WRONG PACKAGE' placeholder 0.0.2" in message
    assert "no Neuron release neuron-env knows ships it" in message


def test_a_marker_that_does_not_apply_leaves_the_package_out() -> None:
    classified = judged('old-tool; python_version < "3.10"')
    assert classified.pins == ()
    assert [n.code for n in classified.notes] == ["install.marker-skipped"]


def test_requirements_files_take_comments_blank_lines_and_continuations(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("# stack\n\ndatasets  # data\ntransformers \\\n  >=4.50\n")
    found = read_requirements_file(reqs, "2.14")
    assert [(r.text, r.origin) for r in found] == [
        ("datasets", f"{reqs}:3"),
        ("transformers    >=4.50", f"{reqs}:4"),  # numbered from its first line, as pip does
    ]


def test_a_hashed_line_continued_as_pip_writes_it_keeps_its_hashes(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    one, two = "a" * 64, "B" * 64
    reqs.write_text(
        f"# lock\nfilelock==3.13.1 \\\n    --hash=sha256:{one} \\\n    --hash sha256:{two}\n"
    )
    (found,) = read_requirements_file(reqs, "2.14")
    assert (found.text, found.origin) == ("filelock==3.13.1", f"{reqs}:2")
    assert found.hashes == (one, two.lower())


@pytest.mark.parametrize("line", ["--index-url http://mirror/simple", "-e .", "-r more.txt"])
def test_option_lines_are_refused_naming_the_line(tmp_path: Path, line: str) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"datasets\n{line}\n")
    with pytest.raises(BadInput) as caught:
        read_requirements_file(reqs, "2.14")
    assert caught.value.message.startswith(f"{reqs}:2: the option line")


def test_a_url_requirement_is_refused() -> None:
    with pytest.raises(BadInput, match="names a URL"):
        gather(["pkg @ https://example.invalid/pkg.whl"], (), "2.14")


PINS = {"torch": "2.14.0", "torch-neuronx": "2.14.3.1", "nki": "0.8.0", "neuronx-cc": "2.29"}
UV_OUTPUT = (
    "  x No solution found when resolving dependencies:\n"
    "  Because greedy==1.0 depends on torch==2.15.0 and neuron-env-plan depends on "
    "torch==2.14.0, we can conclude that ...\n"
)
UV_ALL_OUTPUT = "cause: Because all versions of greedy depend on torch==2.15.0 and ..."
PIP_OUTPUT = (
    "The conflict is caused by:\n"
    "    The user requested torch 2.14.0+cpu (from /w/torch-2.14.0+cpu-py3-none-any.whl)\n"
    "    greedy 1.0 depends on torch==2.15.0\n"
)


def test_conflicts_name_the_package_and_its_requirement() -> None:
    expected = "greedy 1.0 needs torch==2.15.0; Neuron 2.34.0 pairs torch 2.14.0."
    assert conflict_sentence(UV_OUTPUT, "2.34.0", PINS) == expected
    assert conflict_sentence(PIP_OUTPUT, "2.34.0", PINS) == expected
    assert conflict_sentence(UV_ALL_OUTPUT, "2.34.0", PINS) == (
        "greedy (every version) needs torch==2.15.0; Neuron 2.34.0 pairs torch 2.14.0."
    )
    assert conflict_sentence("error: something else", "2.34.0", PINS) is None
