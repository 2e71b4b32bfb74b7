"""The matrix's [libraries] table: what it says, and that doctor and scan say the same about each.

Facts from ../shared/reference/torchneuron.md §12a (optimum-neuron's pins, NxD's and
transformers-neuronx's end of support, the Hugging Face libraries that run natively).
"""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from neuron_env.checks.conflicts import check_conflicts
from neuron_env.checks.context import build_context
from neuron_env.checks.model import Verdict
from neuron_env.facts import Distribution, HostFacts, PythonFacts
from neuron_env.matrix import load_matrix
from neuron_env.scan import rules_for, scan_file

MATRIX = load_matrix()
LATEST = MATRIX.latest()
NATIVE = {"torch": "2.14.0+cpu", "torch-neuronx": "2.14.3.1.2041"}
XLA = {"torch": "2.9.0", "torch-neuronx": "2.9.0.2.15.32035"}  # the last XLA build (Neuron 2.31)
XLA_LIBRARIES = sorted(name for name, lib in LATEST.libraries.items() if lib.line == "xla")


def doctor(dists: dict[str, str], release: str | None = None) -> Verdict:
    """python.conflicts on an environment holding ``dists``."""
    installed = {name: Distribution(version) for name, version in dists.items()}
    facts = HostFacts(
        collected_at="2026-12-06T00:00:00Z",
        sysroot="/",
        python=PythonFacts("/venv/bin/python", "3.12.3", prefix="/venv", in_venv=True,
                           distributions=installed),
    )  # fmt: skip
    return check_conflicts(facts, build_context(MATRIX, facts, release=release))


def scan_imports(module: str, tmp_path: Path) -> list[tuple[str, str, str]]:
    """(rule, message, suggestion) of each finding in a file that imports ``module``."""
    source = tmp_path / "train.py"
    source.write_text(f"import torch\nimport {module}\n", encoding="utf-8")
    findings = scan_file(source, "train.py", rules_for(LATEST))
    return [(f.rule.id, f.message, f.suggestion) for f in findings]


def test_the_table_says_which_line_each_library_runs_on() -> None:
    for release in MATRIX.releases:
        lines = {name: lib.line for name, lib in release.libraries.items()}
        assert {n for n, line in lines.items() if line == "xla"} == {
            "optimum-neuron",
            "neuronx-distributed",
            "neuronx-distributed-inference",
            "neuronx-distributed-training",
            "transformers-neuronx",
        }
        assert {n for n, line in lines.items() if line == "native"} == {
            "transformers", "accelerate", "peft", "diffusers", "torchtitan-neuron", "vllm-neuron"
        }  # fmt: skip


def test_the_table_carries_pins_and_end_of_support_dates_with_sources() -> None:
    optimum = LATEST.libraries["optimum-neuron"]
    assert [(p.version, str(p.torch_neuronx)) for p in optimum.pins] == [
        ("0.4.5", "2.8.0.2.10.16998"),
        ("sdk2.31 branch", "2.9.0.2.15.32035"),
    ]
    assert LATEST.libraries["transformers-neuronx"].end_of_support == datetime.date(2025, 9, 16)
    assert LATEST.libraries["neuronx-distributed-inference"].status == "unsupported"
    assert MATRIX.get("2.33.1").libraries["neuronx-distributed-inference"].status == "supported"
    # NxD's own requirements were not read: the pins it is installed with stay unconfirmed.
    assert not any(p.confirmed for p in LATEST.libraries["neuronx-distributed"].pins)
    assert not LATEST.libraries["vllm-neuron"].confirmed  # pip name and version unknown
    for library in LATEST.libraries.values():
        assert library.sources and all(s in LATEST.sources for s in library.sources)
        assert library.line == "native" or library.advice


def test_doctor_says_optimum_neuron_pulls_in_the_xla_line_and_what_to_do() -> None:
    verdict = doctor({**NATIVE, "optimum-neuron": "0.4.5", "transformers": "4.57.1"})
    assert verdict.status == "warn"
    assert "optimum-neuron 0.4.5 pulls in the XLA line of torch-neuronx" in verdict.summary
    assert "2.8.0.2.10.16998 (0.4.5)" in verdict.summary
    assert "plain transformers and accelerate" in verdict.detail
    assert "separate environment" in verdict.detail
    assert verdict.fix.endswith("uninstall -y optimum-neuron")
    assert "transformers 4" not in verdict.summary  # the native libraries are fine


def test_doctor_names_every_nxd_library_with_its_status() -> None:
    verdict = doctor({**NATIVE, "neuronx-distributed": "0.15.22404",
                      "neuronx-distributed-inference": "0.6.10598"})  # fmt: skip
    assert "neuronx-distributed 0.15.22404 pulls in the XLA line" in verdict.summary
    assert "unsupported on Trn2/Trn3 from Neuron 2.34.0" in verdict.summary
    assert "vLLM Neuron" in verdict.detail


def test_native_libraries_alone_say_nothing() -> None:
    verdict = doctor({**NATIVE, "transformers": "4.57.1", "accelerate": "1.10.0", "peft": "0.17.0"})
    assert verdict.status == "ok"


def test_on_an_xla_environment_the_libraries_are_not_called_out() -> None:
    verdict = doctor({**XLA, "optimum-neuron": "0.4.5", "neuronx-distributed": "0.19.28492"})
    assert "pulls in the XLA line" not in verdict.summary + verdict.detail


@pytest.mark.parametrize("name", XLA_LIBRARIES)
def test_doctor_and_scan_cite_the_same_facts(name: str, tmp_path: Path) -> None:
    library = LATEST.libraries[name]
    verdict = doctor({**NATIVE, name: "1.5.0"}, release=str(LATEST.version))  # not a placeholder
    found = scan_imports(library.imports[0], tmp_path)
    assert [rule for rule, _, _ in found] == ["xla-library"]
    _, message, suggestion = found[0]
    assert library.statement() in verdict.summary
    assert library.statement() in message
    assert suggestion == library.advice
    assert library.advice in verdict.detail
