"""Verification catches every way an environment can differ from its plan."""

from __future__ import annotations

from neuron_env.install.verify import Problem, TorchImport, problems
from tests.support.install_fixtures import plan_for

GOOD = {
    "torch": "2.14.0+cpu",
    "torch-neuronx": "2.14.3.0.1",
    "neuronx-cc": "2.28.7631.0",
    "nki": "0.7.0",
    "filelock": "3.13.1",
}
TORCH_OK = TorchImport("2.14.0+cpu")


def found(
    after: dict[str, str], torch: TorchImport = TORCH_OK, before: dict[str, str] | None = None
) -> list[Problem]:
    return problems(plan_for(), before or {}, after, torch)


def codes(items: list[Problem]) -> list[str]:
    return [p.code for p in items]


def test_an_environment_that_matches_the_plan_has_no_problems() -> None:
    assert found(GOOD) == []


def test_a_version_outside_its_pin() -> None:
    (problem,) = found({**GOOD, "nki": "99.0"})
    assert problem.code == "version"
    assert problem.message == "nki 99.0 is installed; the plan pins nki==0.7.0."


def test_a_missing_package() -> None:
    after = {k: v for k, v in GOOD.items() if k != "neuronx-cc"}
    assert codes(found(after)) == ["version"]


def test_a_placeholder_is_named_as_such() -> None:
    result = found({**GOOD, "nki": "0.0.1"})
    assert codes(result) == ["version", "placeholder"]
    assert "'WRONG PACKAGE' placeholder" in result[1].message


def test_the_legacy_xla_build_is_not_torchneuron() -> None:
    result = found({**GOOD, "torch-neuronx": "2.9.0.2.15.32035"})
    assert codes(result) == ["version", "legacy-xla"]


def test_an_unpinned_neuron_package_added_by_the_install() -> None:
    result = found({**GOOD, "libneuronxla": "3.0.12293.0"})
    assert codes(result) == ["unrouted"]


def test_an_unpinned_neuron_package_that_was_already_there_is_left_alone() -> None:
    before = {"libneuronxla": "3.0.12293.0"}
    assert found({**GOOD, **before}, before=before) == []


def test_an_unpinned_placeholder_is_reported_once_as_a_placeholder() -> None:
    assert codes(found({**GOOD, "libneuronxla": "1.0"})) == ["placeholder"]


def test_import_torch_failing() -> None:
    (problem,) = found(GOOD, TorchImport(None, "ImportError: libc10.so: cannot open"))
    assert problem.message == (
        "'import torch' fails in the new environment: ImportError: libc10.so: cannot open"
    )


def test_import_torch_reporting_another_version() -> None:
    assert codes(found(GOOD, TorchImport("2.13.0+cpu"))) == ["import-torch"]


def test_import_torch_shadowed_by_another_copy() -> None:
    (problem,) = found({**GOOD, "torch": "2.14.0"}, TorchImport("2.14.0+cpu"))
    assert "another torch shadows it" in problem.message
