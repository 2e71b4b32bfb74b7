"""python.requirements as a pure function: markers for the target, extras, companions, fixes."""

from __future__ import annotations

import shlex

from neuron_env.checks.context import build_context
from neuron_env.checks.model import Verdict
from neuron_env.checks.requirements import check_requirements
from neuron_env.facts import Distribution, Ec2Facts, HostFacts, PythonFacts
from neuron_env.invocation import program
from neuron_env.matrix import load_matrix

MATRIX = load_matrix()
STACK_2_14 = {"torch": ("2.14.0+cpu", ()), "torch-neuronx": ("2.14.3.1.2041", ("torch==2.14.*",))}


def judge(
    dists: dict[str, tuple[str, tuple[str, ...]]],
    *,
    python: str = "3.12.3",
    release: str | None = None,
    instance: str | None = None,
) -> Verdict:
    installed = {n: Distribution(v, requires_dist=r) for n, (v, r) in dists.items()}
    facts = HostFacts(
        collected_at="2026-12-03T00:00:00Z",
        sysroot="/",
        python=PythonFacts("/venv/bin/python", python, prefix="/venv", in_venv=True,
                           distributions=installed),
        ec2=Ec2Facts(True, instance_type=instance) if instance else None,
    )  # fmt: skip
    return check_requirements(facts, build_context(MATRIX, facts, release=release))


def test_markers_are_evaluated_for_the_target_interpreter_not_neuron_envs() -> None:
    verdict = judge({
        **STACK_2_14,
        "app": ("1.0", ("old-only; python_version < '3.12'", "new-only; python_version >= '3.12'")),
    })  # fmt: skip
    assert verdict.status == "fail"
    assert "app 1.0 needs new-only, but it is not installed" in verdict.summary
    assert "old-only" not in verdict.summary


def test_extras_count_only_when_another_distribution_asks_for_them() -> None:
    lib = ("1.0", ("speedup; extra == 'fast'",))
    assert judge({**STACK_2_14, "lib": lib}).status == "ok"
    asked = judge({**STACK_2_14, "lib": lib, "app": ("2.0", ("lib[fast]>=1",))})
    assert asked.status == "fail" and "lib 1.0 needs speedup" in asked.summary


def test_a_requirement_the_release_can_meet_is_fixed_by_installing_the_release() -> None:
    verdict = judge({"torch": ("2.14.0+cpu", ()), "app": ("1.0", ("torch-neuronx>=2.14",))})
    assert "app 1.0 needs torch-neuronx>=2.14, but it is not installed" in verdict.summary
    assert verdict.fix == f"{program()} install --torch 2.14 --release 2.34.0 --venv /venv"


def test_another_release_s_companion_warns_and_an_impostor_fails() -> None:
    titan = judge({**STACK_2_14, "torchtitan-neuron": ("0.2.2+neuron.1", ())})
    assert titan.status == "warn"  # 2.34.0's own pin is unconfirmed
    assert "torchtitan-neuron 0.2.2+neuron.1 is Neuron 2.33.1's" in titan.summary
    impostor = judge({**STACK_2_14, "torchao-neuron": ("99.0", ())})
    assert impostor.status == "fail" and "an impostor from another index?" in impostor.summary
    assert shlex.split(impostor.fix)[-3:] == [
        "--index-url", "https://pip.repos.neuron.amazonaws.com", "torchao-neuron==0.18.0+neuron.1"
    ]  # fmt: skip


def test_a_companion_on_the_wrong_pytorch_or_family_fails() -> None:
    older = judge(
        {"torch": ("2.13.0", ()), "torchtitan-neuron": ("0.2.2+neuron.1", ())}, release="2.33.1"
    )
    assert "runs on PyTorch 2.14 only, but torch 2.13.0 is installed" in older.summary
    assert f"{program()} install --torch 2.14" in older.fix
    trn2 = judge({**STACK_2_14, "torchao-neuron": ("0.18.0+neuron.1", ())}, instance="trn2.3xlarge")
    assert (
        trn2.status == "fail"
        and "runs on trn3 only, and this host is a trn2.3xlarge" in trn2.summary
    )


def test_fixes_quote_what_comes_from_the_environment() -> None:
    verdict = judge({**STACK_2_14, "evil; id": ("1.0", ("torch==2.15.0",))})
    assert shlex.split(verdict.fix)[-3:] == ["uninstall", "-y", "evil; id"]


def test_a_part_of_the_release_is_reinstalled_with_it_never_removed() -> None:
    verdict = judge(
        {"torch": ("2.13.0", ()), "torch-neuronx": ("2.14.3.0.2187", ("torch==2.14.0",))},
        release="2.33.1",
    )
    assert "torch-neuronx 2.14.3.0.2187 needs torch==2.14.0, but torch 2.13.0" in verdict.summary
    assert verdict.fix == f"{program()} install --torch 2.13 --release 2.33.1 --venv /venv"
