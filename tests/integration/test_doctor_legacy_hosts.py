"""Trn1, Trn1n, Inf2 and Inf1: TorchNeuron does not run there, and the report says so once, at
the top. The environment that does run there (the PyTorch/XLA line, e.g. the DLAMI venv
/opt/aws_neuronx_venv_pytorch_*; torch-neuron on Inf1) is judged for what can be judged, and no
printed fix removes it or installs TorchNeuron: a fix must make this host better.

Hosts: the scenario trees trn1-instance and inf2-instance (the DLAMI's XLA venv, versions and
sources in their scenario.toml) and legacy-inf1-packages (apt aws-neuron-*, pip torch-neuron).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.hosts import HEALTHY_PYTHON, Scenario, load_scenario, run_doctor

pytestmark = pytest.mark.integration

HEADLINE = "This is a Trn1 instance: TorchNeuron needs Trn2 or Trn3."
HARMFUL = ("install --torch", "uninstall", "torch-neuronx==2.14")


def findings(scenario: Scenario, where: Path) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    doc = json.loads(run_doctor(scenario, where, "--format", "json").stdout)
    return {f["check"]: f for f in doc["findings"]}, doc


def test_the_headline_is_said_once_at_the_top_and_xla_variables_stay(tmp_path: Path) -> None:
    scenario = dataclasses.replace(
        load_scenario("trn1-instance"), env={"XLA_USE_BF16": "1", "PJRT_DEVICE": "NEURON"}
    )
    report = run_doctor(scenario, tmp_path).stdout
    text = " ".join(report.split())
    assert text.count("TorchNeuron needs Trn2 or Trn3") == 1
    assert text.index(HEADLINE) < text.index("Platform ")  # before the first check
    assert "judged for what can be judged; no fix here removes it or installs TorchNeuron" in text
    (tmp_path / "json").mkdir()
    found, _ = findings(scenario, tmp_path / "json")
    assert found["env.variables"]["status"] == "ok"  # the XLA line reads them here


def test_a_torchneuron_environment_on_trn1_is_not_uninstalled(tmp_path: Path) -> None:
    scenario = dataclasses.replace(load_scenario("trn1-instance"), python=dict(HEALTHY_PYTHON))
    found, _ = findings(scenario, tmp_path)
    tnx = found["python.torch-neuronx"]
    assert tnx["status"] == "fail"
    assert tnx["summary"] == (
        "torch-neuronx 2.14.3.0.2187 is TorchNeuron, which does not run on Trn1 "
        "(Trn2 and Trn3 only)"
    )
    assert "/opt/aws_neuronx_venv_pytorch_*" in tnx["fix"]
    for finding in found.values():
        assert not any(word in finding["fix"] for word in HARMFUL), finding


def test_a_placeholder_on_inf2_is_removed_and_nothing_installed(tmp_path: Path) -> None:
    scenario = dataclasses.replace(load_scenario("inf2-instance"), placeholders=("torch-neuronx",))
    found, _ = findings(scenario, tmp_path)
    for check in ("python.torch-neuronx", "python.placeholders"):
        assert found[check]["status"] == "fail"
        assert found[check]["fix"].endswith("-m pip uninstall -y torch-neuronx"), found[check]
        assert "install --torch" not in found[check]["fix"]


def test_inf1_keeps_its_own_sdk(tmp_path: Path) -> None:
    scenario = dataclasses.replace(load_scenario("legacy-inf1-packages"), imds="inf1.xlarge")
    found, _ = findings(scenario, tmp_path)
    assert found["python.conflicts"]["status"] == "ok"
    assert "aws-neuron-dkms" not in found["system.packages"]["summary"]
    for finding in found.values():
        assert "remove" not in finding["fix"] and "uninstall" not in finding["fix"], finding


def test_no_torchneuron_environment_is_offered_from_neuron_env_own_one(tmp_path: Path) -> None:
    scenario = dataclasses.replace(load_scenario("trn1-instance"), python={"neuron-env": "0.1.0"})
    report = run_doctor(scenario, tmp_path).stdout
    assert "Create a TorchNeuron one" not in report
    assert "install --torch" not in report
    (tmp_path / "json").mkdir()
    _, doc = findings(scenario, tmp_path / "json")
    assert doc["next"] == []
