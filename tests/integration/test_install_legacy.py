"""Installing TorchNeuron into a legacy PyTorch/XLA environment removes the whole XLA stack.

The environment holds what the legacy line installs (torch-neuronx 2.9.0.2.x, torch-xla,
libneuronxla, the neuronx-distributed family, transformers-neuronx); the plan says it goes, and
after the install none of it is left.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.indexes import WheelSpec, build_wheel
from tests.support.install_helpers import (
    NeuronEnv,
    PrebuiltEnvs,
    StartIndexes,
    flat,
    installed,
)

pytestmark = pytest.mark.integration

LEGACY = {
    "torch-neuronx": "2.9.0.2.15.32035",
    "torch-xla": "2.9.0",
    "libneuronxla": "2.2.14584.0",
    "neuronx-distributed": "0.15.22404",
    "neuronx-distributed-inference": "0.6.10598",
    "neuronx-distributed-training": "1.5.0",
    "transformers-neuronx": "0.13.1216",
    "torch": "2.9.0",
}
STACK = sorted(set(LEGACY) - {"torch-neuronx", "torch"})


@pytest.fixture
def legacy_venv(tmp_path: Path, isolated_env: dict[str, str], prebuilt_envs: PrebuiltEnvs) -> Path:
    wheels = tmp_path / "legacy-wheels"
    wheels.mkdir()
    files = [str(build_wheel(wheels, WheelSpec(n, v))) for n, v in LEGACY.items()]
    venv = tmp_path / "xla-env"
    prebuilt_envs.plain_venv(venv)  # a python -m venv, pip included, as the legacy guides make
    uv = str(Path(sys.executable).with_name("uv"))
    subprocess.run(
        [uv, "pip", "install", "-q", "--no-deps", "--no-index", "--python",
         str(venv / "bin" / "python"), *files],
        check=True, env=isolated_env,
    )  # fmt: skip
    return venv


def test_the_plan_says_the_legacy_stack_is_removed(
    neuron_env: NeuronEnv, indexes: StartIndexes, legacy_venv: Path
) -> None:
    running = indexes()
    args = ["install", "--torch", "2.14", "--venv", str(legacy_venv), *running.args(), "--dry-run"]
    plan = json.loads(neuron_env(*args, "--json").stdout)["plan"]
    assert plan["remove"] == STACK
    (note,) = [n for n in plan["notes"] if n["code"] == "install.remove-legacy"]
    assert "torch-xla 2.9.0" in note["message"]
    text = neuron_env(*args)
    assert text.returncode == 0, text.stderr
    assert f"Remove (legacy PyTorch/XLA): {', '.join(STACK)}" in flat(text.stdout)


@pytest.mark.parametrize("backend", ["uv", "pip"])
def test_the_install_removes_the_legacy_stack(
    neuron_env: NeuronEnv, indexes: StartIndexes, legacy_venv: Path, backend: str
) -> None:
    running = indexes()
    result = neuron_env(
        "install", "--torch", "2.14", "--venv", str(legacy_venv), *running.args(),
        "--backend", backend,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    versions = installed(legacy_venv)
    assert not set(STACK) & set(versions), versions
    assert (versions["torch-neuronx"], versions["torch"]) == ("2.14.3.0.1", "2.14.0+cpu")
    assert "removed (legacy PyTorch/XLA)" in result.stdout
