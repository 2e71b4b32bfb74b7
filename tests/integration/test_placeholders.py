"""Placeholders from the default index, installed by the real pip from wheels shaped like the real
ones (reference section 10c): empty Summary, the "WRONG PACKAGE" text only in the description, and
mostly a package folder that is not a module name, so importing them proves nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliRunner, cli_runner
from tests.support.dists import install_wheels, make_venv, placeholder_wheel

pytestmark = pytest.mark.integration

# name, version, folder (None: the name itself, not importable), module ("" = none at all)
DEFAULT_INDEX = (
    ("torch-neuronx", "1.0", "torch_neuronx", None),
    ("neuronx-cc", "1.0.post1", None, None),
    ("libneuronxla", "1.0", "libneuronxla", None),
    ("nki", "0.0.1", "nki", None),
    ("nrtpy", "0.0.1", "nrtpy", None),
    ("torchtitan-neuron", "0.0.1", None, None),
    ("vllm-neuron", "0.1.0", None, None),
    ("neuronx-distributed", "0.1", None, None),
    ("neuronx-distributed-inference", "0.1.0", None, None),
    ("neuronx-distributed-training", "1.0", None, None),
    ("transformers-neuronx", "0.1", "transformers_neuronx", None),
    ("neuronx-hwm", "1.0", "neuronx_hwm", None),
    ("aws-neuronx-runtime-discovery", "1.0", None, None),
    ("neuronx-cc-stubs", "1.0", None, None),
    ("nkipy", "0.0.2", "nkipy", None),
    ("libtorch-neuronx-lite", "0.0.1", None, None),
    ("jax-neuronx", "0.0.0", None, None),
    ("nki-library", "0.0.2", None, ""),
)
ENV = {"AWS_EC2_METADATA_DISABLED": "true"}


def _venv_with(where: Path, wheels: list[Path]) -> Path:
    python = make_venv(where / "venv")
    install_wheels(python, wheels)
    return python


@pytest.fixture(scope="module")
def every_placeholder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("placeholders")
    wheels = [
        placeholder_wheel(root, name, version, folder=folder, module=module)
        for name, version, folder, module in DEFAULT_INDEX
    ]
    return _venv_with(root, wheels)


def _placeholders(cli: CliRunner, python: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    result = cli(
        "doctor", "--python", str(python), "--check", "python.placeholders", "--format", "json",
        env=ENV,
    )  # fmt: skip
    doc = json.loads(result.stdout)
    return doc["findings"][0], doc["facts"]["python"]["distributions"]


def test_every_placeholder_of_the_default_index_is_named(
    every_placeholder: Path, tmp_path: Path
) -> None:
    finding, _ = _placeholders(cli_runner(tmp_path), every_placeholder)
    assert finding["status"] == "fail"
    for name, version, _, _ in DEFAULT_INDEX:
        assert f"{name} {version}" in str(finding["summary"]), name
    assert "nki-library: Never what you want" in str(finding["detail"])


def test_the_fix_removes_every_placeholder(every_placeholder: Path, tmp_path: Path) -> None:
    finding, _ = _placeholders(cli_runner(tmp_path), every_placeholder)
    removed = str(finding["fix"]).split(" pip uninstall -y ", 1)[1].split(" && ", 1)[0].split()
    assert sorted(removed) == sorted(name for name, *_ in DEFAULT_INDEX)


def test_unlisted_versions_are_caught_by_their_metadata(tmp_path: Path) -> None:
    """Versions no matrix lists: the description's text, or the placeholder shape alone."""
    wheels = [
        placeholder_wheel(tmp_path, "neuronx-distributed", "0.2"),  # text only in the body
        placeholder_wheel(
            tmp_path, "aws-neuronx-telemetry", "1.0", text="Install it from the Neuron repository."
        ),  # no WRONG PACKAGE text: Amazon, Proprietary, one raising __init__.py
        placeholder_wheel(  # the real compiler: also Amazon and Proprietary, but a real package
            tmp_path,
            "neuronx-cc",
            "2.28.7631.0",
            folder="neuronxcc",
            text="Neuron compiler",
            module="__version__ = '2.28.7631.0'\n",
            extra_files={"neuronxcc/driver.py": "def main(): ...\n"},
        ),
    ]
    python = _venv_with(tmp_path, wheels)
    finding, dists = _placeholders(cli_runner(tmp_path), python)
    assert finding["status"] == "fail"
    summary = str(finding["summary"])
    assert "neuronx-distributed 0.2" in summary and "aws-neuronx-telemetry 1.0" in summary
    assert "neuronx-cc" not in summary
    assert "its description says 'WRONG PACKAGE'" in str(finding["detail"])
    facts = dists["aws-neuronx-telemetry"]
    assert facts["stub"] is True and facts["license"] == "Proprietary"
    assert dists["neuronx-cc"]["stub"] is False
