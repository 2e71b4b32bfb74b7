"""The doctor's words: singular where there is one, and no message cut inside a word."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from neuron_env.wording import shorten_words
from tests.support.hosts import load_scenario, run_doctor, scenario_doctor

pytestmark = pytest.mark.integration


def test_one_warning_is_one_warning(tmp_path: Path) -> None:
    # Its one warning: missing kernel headers (its 2.33-era torch-neuronx also has known issues,
    # a second warning, left out here).
    scenario = load_scenario("kernel-headers-missing")
    result = run_doctor(scenario, tmp_path, "--skip", "python.known-issues")
    verdict = result.stdout.rstrip().splitlines()[-1]
    assert verdict.startswith("Ready, with warnings:"), verdict
    assert " 1 warning" in verdict and "1 warnings" not in verdict


def test_one_neuron_device_is_one_device(tmp_path: Path) -> None:
    # a trn2.48xlarge (16 chips) whose container was given only /dev/neuron0
    scenario = dataclasses.replace(
        load_scenario("healthy-trn2-ubuntu-26.04"), remove=("dev/neuron1*", "dev/neuron[2-9]")
    )
    doc = json.loads(run_doctor(scenario, tmp_path, "--format", "json").stdout)
    devices = next(f for f in doc["findings"] if f["check"] == "driver.devices")
    assert devices["summary"] == "1 Neuron device, but this instance type has 16"


def test_the_busy_core_message_is_never_cut_inside_a_word(tmp_path: Path) -> None:
    command = "/opt/aws_neuronx_venv_torch_neuronx_2_14_0/bin/python3 -u train_llama.py"
    with scenario_doctor(load_scenario("cores-held-long-command"), tmp_path) as doctor:
        for columns in (40, 60, 80, 120, 200):
            text = " ".join(doctor(env={"COLUMNS": str(columns)}).stdout.split())
            assert f"pid 4242 ({command} …) holds /dev/neuron0" in text, (columns, text)


@pytest.mark.parametrize(
    ("text", "limit", "shown"),
    [
        ("python train.py --epochs 3", 80, "python train.py --epochs 3"),
        ("python train.py --learning-rate 0.001", 30, "python train.py …"),
        (
            "/a/very/long/path/without/spaces/python3 -u x.py",
            10,
            "/a/very/long/path/without/spaces/python3 …",
        ),
    ],
)
def test_a_long_command_is_shortened_between_words(text: str, limit: int, shown: str) -> None:
    assert shorten_words(text, limit) == shown
