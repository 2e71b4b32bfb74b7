"""``neuron-env smoke`` against real torch in real venvs: the fake neuron device, CPU, no torch."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, CliRunner
from tests.support.install_helpers import flat

pytestmark = pytest.mark.integration


def smoke_json(cli: CliRunner, python: Path, *args: str, env: dict[str, str] | None = None):  # type: ignore[no-untyped-def]
    result = cli("smoke", "--python", str(python), "--format", "json", *args, env=env)
    return result, json.loads(result.stdout)


def test_a_healthy_device_passes_with_figures_and_timings(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = smoke_json(cli, neuron_python)
    assert result.returncode == 0, result.stderr
    assert doc["ok"] is True
    assert doc["info"]["available"] is True and doc["info"]["count"] == 2
    assert doc["info"]["accelerator"] == "neuron"
    assert [c["dtype"] for c in doc["cases"]] == ["fp32", "bf16"]
    for case in doc["cases"]:
        assert case["status"] == "pass"
        assert case["first_call_s"] > 0 and case["steady_s"] > 0 and case["repeats"] == 5
        assert case["fallback_ops"] == [] and case["fallback_tracked"] is True
        (output,) = case["comparisons"]
        assert output["ok"] and output["max_rel"] < output["rtol"]


def test_text_report_names_device_errors_and_fallback(cli: CliRunner, neuron_python: Path) -> None:
    result = cli("smoke", "--python", str(neuron_python))
    assert result.returncode == 0, result.stderr
    assert "neuron: available, 2 device(s)" in result.stdout
    assert "torch-neuronx 2.13.3.0+fake" in result.stdout
    assert "first call" in result.stdout and "steady" in result.stdout
    assert "CPU fallback  none" in result.stdout
    assert "smoke test on neuron (2 device(s)) passed" in result.stdout
    assert "[2/2] smoke/bf16/eager" in result.stderr  # progress while it runs


def test_a_matmul_that_falls_back_to_cpu_fails_the_smoke_test(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = smoke_json(cli, neuron_python, env={"FAKE_NEURON_FALLBACK_OPS": "aten::mm"})
    assert result.returncode == 1
    assert {c["status"] for c in doc["cases"]} == {"fallback"}
    assert doc["cases"][0]["fallback_ops"] == ["aten::mm"]


def test_a_wrong_matmul_fails_with_its_error(cli: CliRunner, neuron_python: Path) -> None:
    result = cli("smoke", "--python", str(neuron_python), env={"FAKE_NEURON_WRONG_OPS": "aten::mm"})
    assert result.returncode == 1
    assert "✗ fail" in result.stdout
    assert "max rel 5.0e-02" in result.stdout  # the injected 5% error, against rtol 0.001
    assert "FAILED" in result.stdout


def test_no_device_is_a_clear_failure(cli: CliRunner, neuron_python: Path) -> None:
    result, doc = smoke_json(cli, neuron_python, env={"FAKE_NEURON_NO_DEVICE": "1"})
    assert result.returncode == 1
    assert doc["ok"] is False and doc["cases"] == []
    assert doc["problem"]["kind"] == "no-device"
    assert "sees no Neuron device" in doc["problem"]["message"]
    assert "neuron-ls" in doc["problem"]["hint"]


def test_no_device_in_text(cli: CliRunner, neuron_python: Path) -> None:
    result = cli("smoke", "--python", str(neuron_python), env={"FAKE_NEURON_NO_DEVICE": "1"})
    assert result.returncode == 1
    assert "✗ torch-neuronx 2.13.3.0+fake is installed but sees no Neuron device" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_torch_without_torch_neuronx_has_no_neuron_device(
    cli: CliRunner, torch_python: Path
) -> None:
    result, doc = smoke_json(cli, torch_python)
    assert result.returncode == 1
    assert doc["problem"]["kind"] == "no-device"
    assert "torch-neuronx is not installed" in doc["problem"]["message"]


def test_device_smoke_advice_has_no_placeholder_and_says_it_once(
    cli: CliRunner, torch_python: Path
) -> None:
    venv = str(torch_python.parent.parent)
    minor = ".".join(_torch_version(torch_python).split(".")[:2])
    install = f"install --torch {minor} --venv {venv}"
    smoke = flat(cli("smoke", "--python", str(torch_python)).stdout)
    preflight = flat(cli("preflight", "--python", str(torch_python)).stdout)
    block = preflight.split("device.smoke")[1].split("Not ready")[0]
    for text in (smoke, block):
        assert "X.Y" not in text
        assert install in text
    assert smoke.count("Install it with") == 1
    assert block.count("Install it with") == 1, block
    assert f"fix: Install it with '{NEURON_ENV} {install}'" in block


def _torch_version(python: Path) -> str:
    """torch's version from its metadata: importing torch would cost about 2 s of CPU."""
    code = "from importlib.metadata import version; print(version('torch').split('+')[0])"
    argv = [str(python), "-I", "-c", code]
    return subprocess.run(argv, capture_output=True, text=True, check=True).stdout.strip()


def test_a_target_without_torch_is_a_clear_error(cli: CliRunner, bare_python: Path) -> None:
    result = cli("smoke", "--python", str(bare_python))
    assert result.returncode == 1
    assert f"torch is not installed in {bare_python}" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_the_no_torch_hint_names_the_environment_to_install_into(
    cli: CliRunner, bare_python: Path
) -> None:
    """Without --venv the printed install exits 2 ("No target environment") in a fresh shell."""
    result = cli("smoke", "--python", str(bare_python), env={"COLUMNS": "60"})  # narrow: kept whole
    venv = bare_python.parent.parent
    assert f"'{NEURON_ENV} install --torch 2.14 --venv {venv}'" in result.stdout, result.stdout


def test_a_runtime_that_hangs_while_loading_is_killed_and_reported(
    cli: CliRunner, neuron_python: Path
) -> None:
    env = {"FAKE_NEURON_HANG_AT_LOAD": "1"}
    result, doc = smoke_json(cli, neuron_python, "--timeout", "5", env=env)
    assert result.returncode == 1
    assert doc["problem"]["kind"] == "worker-timeout"
    assert "did not start within 5 s" in doc["problem"]["message"]


def test_a_target_that_is_not_python_is_a_clear_error(cli: CliRunner) -> None:
    result = cli("smoke", "--python", "/bin/true")
    assert result.returncode == 1
    assert "The self-test worker exited with code 0 in /bin/true before reporting" in result.stdout


def test_smoke_on_cpu_says_fallback_is_not_tracked(cli: CliRunner, torch_python: Path) -> None:
    result = cli("smoke", "--python", str(torch_python), "--device", "cpu")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "not tracked on cpu" in result.stdout
    _, doc = smoke_json(cli, torch_python, "--device", "cpu")
    assert all(c["fallback_ops"] is None and not c["fallback_tracked"] for c in doc["cases"])


def test_cuda_on_a_cpu_build_of_torch_is_no_device(cli: CliRunner, torch_python: Path) -> None:
    result, doc = smoke_json(cli, torch_python, "--device", "cuda")
    assert result.returncode == 1
    assert doc["problem"]["kind"] == "no-device"
    assert "(a CPU-only build) sees no CUDA device" in doc["problem"]["message"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--device", "tpu"], "Unknown device 'tpu'"),
        (["--device", "cpu:1"], "Unknown device 'cpu:1'"),
        (["--python", "/nonexistent/python"], "does not exist"),
    ],
)
def test_bad_input_exits_2(cli: CliRunner, args: list[str], message: str) -> None:
    result = cli("smoke", *args)
    assert result.returncode == 2
    assert message in result.stderr
