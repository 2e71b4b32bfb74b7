"""``neuron-env evaluate`` on real torch: user entries from tests/data/evaluate on the fake neuron
device (with injected faults) and on the CPU."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import DATA, CliRunner, Result
from tests.support.html_pages import assert_self_contained, render_in_chromium
from tests.support.processes import processes_with

pytestmark = pytest.mark.integration

ENTRIES = DATA / "evaluate"


def entry(name: str, function: str = "make") -> str:
    return f"{ENTRIES / name}.py:{function}"


def evaluate(
    cli: CliRunner, python: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[Result, dict[str, Any]]:
    result = cli("evaluate", "--python", str(python), "--format", "json", *args, env=env)
    return result, json.loads(result.stdout)


def stages(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {stage["name"]: stage for stage in doc["stages"]}


def tensors(stage: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {c["tensor"]: c for c in stage["comparisons"]}


def test_a_transformer_block_matches_the_cpu_eagerly_and_compiled(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = evaluate(cli, neuron_python, entry("transformer_block"), "--compile")
    assert result.returncode == 0, doc["details"]
    assert doc["ok"] is True and doc["status"] == "pass"
    assert doc["model"]["name"] == "TransformerBlock"
    assert doc["model"]["inputs"] == [{"name": "x", "shape": [2, 8, 32], "dtype": "fp32"}]
    eager, compiled = stages(doc)["eager"], stages(doc)["compile"]
    for stage in (eager, compiled):
        assert stage["status"] == "pass"
        assert stage["fallback_ops"] == []
        assert stage["first_call_s"] > 0 and stage["steady_s"] > 0 and stage["repeats"] == 5
        compared = tensors(stage)
        assert "output" in compared and "grad attention.qkv.weight" in compared
    assert eager["op_counts"]["aten::_softmax"] == 1 and eager["op_counts"]["aten::addmm"] >= 4
    assert compiled["graphs"] == 1 and compiled["graph_breaks"] == []


def test_every_parameter_gradient_is_compared(cli: CliRunner, neuron_python: Path) -> None:
    _, doc = evaluate(cli, neuron_python, entry("cnn"))
    compared = tensors(stages(doc)["eager"])
    assert set(compared) == {
        "output",
        "grad features.0.weight",
        "grad features.0.bias",
        "grad features.3.weight",
        "grad features.3.bias",
        "grad head.weight",
        "grad head.bias",
    }
    assert stages(doc)["eager"]["op_counts"]["aten::convolution"] == 2


def test_an_injected_wrong_op_fails_with_its_figures(cli: CliRunner, neuron_python: Path) -> None:
    env = {"FAKE_NEURON_WRONG_OPS": "aten::addmm"}  # the CNN's last layer: its output, 5% large
    result, doc = evaluate(cli, neuron_python, entry("cnn"), env=env)
    assert result.returncode == 1
    eager = stages(doc)["eager"]
    assert eager["status"] == "fail" and doc["status"] == "fail"
    output = tensors(eager)["output"]
    assert output["ok"] is False and output["mismatched"] == output["total"] == 20
    assert output["max_rel"] == pytest.approx(0.05, rel=1e-3)
    assert output["rtol"] == 1e-3
    assert doc["details"][0].startswith("eager: fail — output: 20/20 off; max rel 5.0e-02")
    text = cli("evaluate", "--python", str(neuron_python), entry("cnn"), env=env)
    assert text.returncode == 1
    assert "✗ fail" in text.stdout and "output: 20/20 off; max rel 5.0e-02" in text.stdout
    assert "SmallCNN on neuron FAILED: eager fail" in text.stdout


def test_an_injected_fallback_is_listed_with_its_count(cli: CliRunner, neuron_python: Path) -> None:
    env = {"FAKE_NEURON_FALLBACK_OPS": "aten::gelu"}
    result, doc = evaluate(cli, neuron_python, entry("transformer_block"), env=env)
    assert result.returncode == 1
    eager = stages(doc)["eager"]
    assert eager["status"] == "fallback" and eager["fallback_ops"] == ["aten::gelu"]
    assert eager["op_counts"]["aten::gelu"] == 1
    assert doc["fallback_ops"] == ["aten::gelu"]
    text = cli("evaluate", "--python", str(neuron_python), entry("transformer_block"), env=env)
    assert "CPU fallback: aten::gelu ×1 (of " in text.stdout
    assert "correct, but fell back to CPU: aten::gelu ×1" in text.stdout
    allowed, _ = evaluate(
        cli, neuron_python, entry("transformer_block"), "--allow-fallback", env=env
    )
    assert allowed.returncode == 0


def test_a_training_entry_compares_the_loss_and_gradients(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = evaluate(cli, neuron_python, entry("training"), "--compile")
    assert result.returncode == 0, doc["details"]
    assert doc["model"]["name"] == "mlp-classifier" and doc["model"]["loss"] is True
    for name in ("eager", "compile"):
        compared = tensors(stages(doc)[name])
        assert {"output", "loss", "grad 0.weight", "grad 3.bias"} <= set(compared)
        assert compared["loss"]["total"] == 1


def test_several_shapes_count_recompiles_and_advise_bucketing(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = evaluate(
        cli, neuron_python, entry("shapes"), "--shapes", "2x8,4x8", "--shapes", "4x32"
    )
    assert result.returncode == 0, doc["details"]
    assert doc["compile"] is True  # --shapes implies --compile
    shapes = [s for s in doc["stages"] if s["kind"] == "shape"]
    assert [s["name"] for s in shapes] == ["shape 2x8", "shape 4x8", "shape 4x32"]
    assert [s["graphs"] for s in shapes] == [1, 1, 1]
    assert all(s["first_call_s"] > 0 and s["steady_s"] > 0 for s in shapes)
    assert doc["recompiles"] == 2
    (advice,) = [line for line in doc["advice"] if "input shapes" in line]
    assert advice.startswith("3 of 3 input shapes compiled a graph of their own")
    assert "bucketing" in advice
    assert "Support matrix: torch.compile(dynamic=True) is rejected" in advice


def test_the_entry_can_name_its_own_shapes(cli: CliRunner, neuron_python: Path) -> None:
    _, doc = evaluate(cli, neuron_python, entry("shapes"), "--compile")
    names = [s["name"] for s in doc["stages"]]
    assert names == ["eager", "compile", "shape 2x8", "shape 2x16", "shape 4x16"]


def test_shapes_without_inputs_for_says_what_the_entry_needs(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = evaluate(cli, neuron_python, entry("cnn"), "--shapes", "2x3x16x16")
    assert result.returncode == 1
    shapes = stages(doc)["shapes"]
    assert shapes["status"] == "error" and "inputs_for(shape)" in shapes["message"]


def test_a_failed_compilation_names_the_op_that_fails_alone(
    cli: CliRunner, neuron_python: Path
) -> None:
    env = {"FAKE_NEURON_COMPILE_FAIL_OPS": "gelu"}
    result, doc = evaluate(cli, neuron_python, entry("transformer_block"), "--compile", env=env)
    assert result.returncode == 1
    assert stages(doc)["eager"]["status"] == "pass"
    compiled = stages(doc)["compile"]
    assert compiled["status"] == "error" and "failed to lower 'gelu'" in compiled["error"]
    assert [f["op"] for f in compiled["failed_ops"]] == ["torch._C._nn.gelu"]
    assert compiled["isolation_complete"] is True
    assert any("The compiler rejects torch._C._nn.gelu" in line for line in doc["advice"])


def test_graph_breaks_are_counted_with_their_reason(cli: CliRunner, torch_python: Path) -> None:
    result, doc = evaluate(cli, torch_python, entry("graph_break"), "--compile", "--device", "cpu")
    assert result.returncode == 0, doc["details"]
    compiled = stages(doc)["compile"]
    assert compiled["graphs"] == 2
    (graph_break,) = compiled["graph_breaks"]
    assert graph_break["count"] == 1 and "Tensor.item()" in graph_break["reason"]
    assert "1 graph break" in compiled["message"]


def test_the_cpu_device_works_anywhere_and_says_fallback_is_not_tracked(
    cli: CliRunner, torch_python: Path
) -> None:
    result, doc = evaluate(cli, torch_python, entry("transformer_block"), "--device", "cpu")
    assert result.returncode == 0, doc["details"]
    eager = stages(doc)["eager"]
    assert eager["fallback_ops"] is None and eager["fallback_tracked"] is False
    text = cli("evaluate", "--python", str(torch_python), "--device", "cpu", entry("cnn"))
    assert "CPU fallback: not tracked on cpu" in text.stdout


def test_a_module_entry_is_imported_from_the_current_directory(
    cli: CliRunner, neuron_python: Path, tmp_path: Path
) -> None:
    shutil.copy(ENTRIES / "cnn.py", tmp_path / "my_cnn.py")
    result, doc = evaluate(cli, neuron_python, "my_cnn:make")
    assert result.returncode == 0, doc["details"]
    assert doc["model"]["source"] == "my_cnn.py:24"
    missing, doc = evaluate(cli, neuron_python, "not_my_module:make")
    assert missing.returncode == 1
    assert doc["problem"]["message"].startswith("Cannot import module 'not_my_module'")


@pytest.mark.parametrize(
    ("scenario", "expected"),
    [
        (
            "raises",
            "raises.py:make raised FileNotFoundError: no checkpoint at /nonexistent/checkpoint.pt "
            "(at {dir}/raises.py:7)",
        ),
        (
            "wrong_return",
            "wrong_return.py:make (line 6) returned the model alone; expected (model, inputs)",
        ),
        (
            "missing_dependency",
            "missing_dependency.py failed: ModuleNotFoundError: No module named "
            "'not_a_real_dependency' (at {dir}/missing_dependency.py:3)",
        ),
        (
            "model_raises",
            "The model raised on the CPU (the reference run): RuntimeError: mat1 and mat2 shapes "
            "cannot be multiplied (2x5 and 8x4) (at {dir}/model_raises.py:12)",
        ),
    ],
)
def test_a_broken_entry_gets_a_clear_error_naming_its_file_and_line(
    cli: CliRunner, neuron_python: Path, scenario: str, expected: str
) -> None:
    result = cli("evaluate", "--python", str(neuron_python), entry(scenario))
    assert result.returncode == 1
    assert expected.format(dir=ENTRIES) in result.stdout.replace("\n", " ").replace("  ", " ")
    assert "Traceback" not in result.stdout + result.stderr
    _, doc = evaluate(cli, neuron_python, entry(scenario))
    assert doc["problem"]["kind"] == "entry" and doc["stages"] == []


def test_debug_shows_the_users_traceback(cli: CliRunner, neuron_python: Path) -> None:
    result = cli("--debug", "evaluate", "--python", str(neuron_python), entry("raises"))
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert 'raises.py", line 12, in make' in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("no_colon",), "ENTRY 'no_colon' is not module:function nor path.py:function."),
        (("missing.py:make",), "missing.py does not exist."),
        (("model.py:not a name",), "'not a name' in ENTRY 'model.py:not a name' is not a Python"),
        ((entry("cnn"), "--device", "tpu"), "Unknown device 'tpu'."),
        ((entry("cnn"), "--shapes", "2xfoo"), "--shapes '2xfoo' is not a shape."),
        ((entry("cnn"), "-o", "/proc/report.html"), "Cannot write /proc/report.html"),
    ],
)
def test_bad_input_is_exit_2_before_anything_runs(
    cli: CliRunner, neuron_python: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("evaluate", "--python", str(neuron_python), *args)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())
    assert result.stdout == ""


def test_no_device_and_no_torch_are_clear_failures(
    cli: CliRunner, neuron_python: Path, bare_python: Path
) -> None:
    result, doc = evaluate(cli, neuron_python, entry("cnn"), env={"FAKE_NEURON_NO_DEVICE": "1"})
    assert result.returncode == 1 and doc["problem"]["kind"] == "no-device"
    result, doc = evaluate(cli, bare_python, entry("cnn"))
    assert result.returncode == 1 and doc["problem"]["kind"] == "no-torch"
    assert doc["status"] == "error" and doc["stages"] == []


def test_a_hanging_stage_times_out_and_keeps_what_ran_before(
    cli: CliRunner, neuron_python: Path
) -> None:
    marker = f"HANG_TEST_{uuid.uuid4().hex}"
    # eager hangs in the device's gelu; the CPU reference does not
    env = {"FAKE_NEURON_HANG_OPS": "aten::gelu", "NEURON_ENV_TEST_MARK": marker}
    result, doc = evaluate(
        cli, neuron_python, entry("transformer_block"), "--timeout", "10", env=env
    )
    assert result.returncode == 1
    assert doc["model"]["name"] == "TransformerBlock"
    eager = stages(doc)["eager"]
    assert eager["status"] == "timeout"
    assert eager["message"] == "did not finish within 10 s; the worker was killed"
    assert processes_with(marker) == []  # the hung worker is gone, not left behind


def test_an_entry_that_never_returns_times_out_with_a_clear_message(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = evaluate(cli, neuron_python, entry("hangs"), "--timeout", "8")
    assert result.returncode == 1
    assert doc["problem"]["kind"] == "entry-timeout"
    assert doc["problem"]["message"].endswith(
        "hangs.py:make and running it once on the CPU did not finish within 8 s; the worker "
        "was killed."
    )


def test_a_crashing_runtime_is_an_error_of_that_stage(cli: CliRunner, neuron_python: Path) -> None:
    env = {"FAKE_NEURON_CRASH_OPS": "aten::gelu"}
    result, doc = evaluate(cli, neuron_python, entry("transformer_block"), env=env)
    assert result.returncode == 1
    eager = stages(doc)["eager"]
    assert eager["status"] == "error"
    assert eager["message"].startswith("the worker exited with code -6 during this stage")


def test_the_html_report_is_one_page_with_the_users_strings_escaped(
    cli: CliRunner, neuron_python: Path, tmp_path: Path
) -> None:
    report = tmp_path / "evaluate.html"
    args = ("--python", str(neuron_python), "--format", "html", "-o", str(report))
    result = cli("evaluate", *args, entry("hostile_name"))
    assert result.returncode == 0, result.stderr
    page = assert_self_contained(report.read_text(encoding="utf-8"))
    assert "b" not in page.tags  # shown, not run
    assert "<script>alert('pwned')</script> & <b>bold</b>" in page.headings[0]
    assert page.tags["table"] >= 4 and page.tags["svg"] == 1 and page.tags["rect"] >= 2
    rendered = render_in_chromium(report, tmp_path)
    assert rendered.headings == page.headings and rendered.tags["svg"] == 1


def test_the_entrys_tolerances_replace_the_defaults(cli: CliRunner, neuron_python: Path) -> None:
    env = {"FAKE_NEURON_WRONG_OPS": "aten::addmm"}  # the output is 5% off: within 0.1
    result, doc = evaluate(cli, neuron_python, entry("tolerances"), env=env)
    assert result.returncode == 0, doc["details"]
    compared = tensors(stages(doc)["eager"])
    assert (compared["output"]["rtol"], compared["output"]["atol"]) == (0.1, 0.1)
    assert compared["output"]["max_rel"] == pytest.approx(0.05, rel=1e-3)
    assert compared["grad head.weight"]["rtol"] == 1e-3  # the rest keep the fp32 default


def test_a_bf16_forward_only_entry_compares_each_named_output(
    cli: CliRunner, neuron_python: Path
) -> None:
    result, doc = evaluate(cli, neuron_python, entry("bf16_inference"))
    assert result.returncode == 0, doc["details"]
    assert doc["model"]["dtypes"] == ["bf16"] and doc["model"]["backward"] is False
    compared = tensors(stages(doc)["eager"])
    assert set(compared) == {"output.logits", "output.label"}  # no gradients
    assert compared["output.logits"]["rtol"] == 3e-2
    label = compared["output.label"]
    assert (label["rtol"], label["atol"], label["mismatched"]) == (0.0, 0.0, 0)  # exact


def test_a_misspelt_function_gets_a_suggestion(cli: CliRunner, neuron_python: Path) -> None:
    result = cli("evaluate", "--python", str(neuron_python), entry("cnn", "mkae"))
    assert result.returncode == 1
    assert f"{ENTRIES}/cnn.py has no attribute 'mkae'." in result.stdout
    assert "Did you mean 'make'?" in result.stdout
