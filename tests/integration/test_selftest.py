"""``neuron-env selftest`` on real torch: the fake neuron device with injected faults, and CPU."""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from neuron_env.selftest import select_variants
from tests.support.cli import CliRunner, Result, cli_runner
from tests.support.junit import assert_valid_junit
from tests.support.processes import processes_with

pytestmark = pytest.mark.integration

BY_DESIGN = {"float64/fp64/eager", "dynamic_shapes/fp32/compile"}


def selftest(
    cli: CliRunner, python: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[Result, dict[str, Any]]:
    result = cli(
        "selftest", "--python", str(python), "--format", "json", *args, env=env, timeout=600
    )
    return result, json.loads(result.stdout)


def by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {case["name"]: case for case in doc["cases"]}


@pytest.fixture(scope="module")
def quick_on_neuron(
    tmp_path_factory: pytest.TempPathFactory, neuron_python: Path
) -> tuple[Result, dict[str, Any]]:
    """One ``selftest --level quick`` on the healthy fake device (81 cases, 40 of them compiled:
    the costliest run here), read by the tests that look at its cases."""
    return selftest(cli_runner(tmp_path_factory.mktemp("quick")), neuron_python, "--level", "quick")


def test_a_healthy_fake_device_passes_the_quick_level(
    quick_on_neuron: tuple[Result, dict[str, Any]],
) -> None:
    result, doc = quick_on_neuron
    assert result.returncode == 0, doc["details"]
    cases = by_name(doc)
    assert list(cases) == select_variants("quick")
    assert {n for n, c in cases.items() if c["status"] != "pass"} == BY_DESIGN
    for name, case in cases.items():
        assert case["fallback_ops"] == [], name
        if name not in BY_DESIGN:
            assert case["first_call_s"] > 0 and case["steady_s"] > 0, name


def test_documented_beta_behaviours_are_reported_as_such(
    quick_on_neuron: tuple[Result, dict[str, Any]],
) -> None:
    result, doc = quick_on_neuron  # the quick level holds float64, dynamic_shapes and recompile
    assert result.returncode == 0
    cases = by_name(doc)
    float64 = cases["float64/fp64/eager"]
    assert float64["status"] == "unsupported"
    assert "float64 is computed with float32 precision" in float64["behaviour"]
    assert "float64 is not supported natively on Neuron" in float64["warnings"][0]
    dynamic = cases["dynamic_shapes/fp32/compile"]
    assert dynamic["status"] == "unsupported"
    assert dynamic["behaviour"].startswith("torch.compile(dynamic=True) is rejected:")
    recompile = cases["recompile/fp32/compile"]
    assert recompile["status"] == "pass"
    assert recompile["metrics"]["graphs_compiled"] == 2


def test_an_op_made_numerically_wrong_fails_with_its_error_figures(
    cli: CliRunner, neuron_python: Path
) -> None:
    env = {"FAKE_NEURON_WRONG_OPS": "aten::_softmax"}
    result, doc = selftest(cli, neuron_python, "--only", "softmax", "--only", "gelu", env=env)
    assert result.returncode == 1
    cases = by_name(doc)
    assert {n for n, c in cases.items() if c["status"] == "fail"} == {
        "softmax/fp32/eager",
        "softmax/fp32/compile",
        "softmax/bf16/eager",
        "softmax/bf16/compile",
    }
    assert all(c["status"] == "pass" for n, c in cases.items() if n.startswith("gelu/"))
    output = cases["softmax/fp32/eager"]["comparisons"][0]
    assert output["tensor"] == "output" and output["ok"] is False
    assert output["max_rel"] == pytest.approx(0.05, rel=1e-3)  # the fake's 5% error
    assert output["max_rel"] > output["rtol"] and output["mismatched"] > 0
    assert "softmax/fp32/eager: fail" in doc["details"][0]


def test_a_wrong_op_in_text_shows_figures_against_tolerance(
    cli: CliRunner, neuron_python: Path
) -> None:
    env = {"FAKE_NEURON_WRONG_OPS": "aten::cumsum"}
    result = cli("selftest", "--python", str(neuron_python), "--only", "cumsum/fp32/eager", env=env)
    assert result.returncode == 1
    assert "✗ fail" in result.stdout
    assert "off; max rel 5.0e-02" in result.stdout and "rtol 0.0001" in result.stdout
    assert "FAILED: 1 fail" in result.stdout


def test_an_op_that_falls_back_to_cpu_is_reported_as_such(
    cli: CliRunner, neuron_python: Path
) -> None:
    env = {"FAKE_NEURON_FALLBACK_OPS": "aten::sort"}
    # Eager variants only: a worker that compiles nothing never imports torch._dynamo.
    result, doc = selftest(
        cli, neuron_python, "--only", "sort/fp32/eager", "--only", "topk/fp32/eager", env=env
    )
    assert result.returncode == 1
    cases = by_name(doc)
    assert cases["sort/fp32/eager"]["status"] == "fallback"
    assert cases["sort/fp32/eager"]["fallback_ops"] == ["aten::sort"]
    assert cases["topk/fp32/eager"]["status"] == "pass"
    text = cli("selftest", "--python", str(neuron_python), "--only", "sort/fp32/eager", env=env)
    assert "fell back to CPU" in text.stdout and "CPU fallback: aten::sort" in text.stdout
    allowed, _ = selftest(
        cli, neuron_python, "--only", "sort/fp32/eager", "--allow-fallback", env=env
    )
    assert allowed.returncode == 0


def test_a_hung_case_is_killed_at_the_timeout_and_the_rest_still_run(
    cli: CliRunner, neuron_python: Path
) -> None:
    marker = f"HANG_TEST_{uuid.uuid4().hex}"
    env = {"FAKE_NEURON_HANG_OPS": "aten::cumsum", "NEURON_ENV_TEST_MARK": marker}
    start = time.monotonic()
    result, doc = selftest(
        cli,
        neuron_python,
        "--only",
        "cumsum/fp32/eager",
        "--only",
        "sort/fp32/eager",
        "--timeout",
        "5",
        "--keep-going",
        env=env,
    )
    assert time.monotonic() - start < 60
    assert result.returncode == 1
    cases = by_name(doc)
    assert cases["cumsum/fp32/eager"]["status"] == "timeout"
    assert "did not finish within 5 s" in cases["cumsum/fp32/eager"]["message"]
    assert cases["sort/fp32/eager"]["status"] == "pass"  # a fresh worker carried on
    assert processes_with(marker) == []  # the hung worker is gone, not left behind


def test_after_a_hang_the_rest_is_not_run_and_says_why(cli: CliRunner, neuron_python: Path) -> None:
    env = {"FAKE_NEURON_HANG_OPS": "aten::cumsum"}
    args = ["--only", "cumsum/fp32/eager", "--only", "sort/fp32/*", "--timeout", "5"]
    start = time.monotonic()
    result = cli("selftest", "--python", str(neuron_python), *args, env=env, timeout=600)
    assert time.monotonic() - start < 30  # one timeout, not one per variant
    assert result.returncode == 1
    assert "✗ timeout" in result.stdout
    lines = [line for line in result.stdout.splitlines() if line.startswith("sort/fp32/")]
    assert len(lines) == 2
    for line in lines:
        assert "- skipped" in line and "not run: the device hung in cumsum/fp32/eager" in line


def test_a_worker_that_crashes_mid_case_is_an_error_and_the_rest_still_run(
    cli: CliRunner, neuron_python: Path
) -> None:
    env = {"FAKE_NEURON_CRASH_OPS": "aten::topk"}
    result, doc = selftest(
        cli, neuron_python, "--only", "topk/fp32/eager", "--only", "sort/fp32/eager",
        "--keep-going", env=env,
    )  # fmt: skip
    assert result.returncode == 1
    cases = by_name(doc)
    assert cases["topk/fp32/eager"]["status"] == "error"
    assert "the worker exited with code -6 during this case" in cases["topk/fp32/eager"]["message"]
    assert cases["topk/fp32/eager"]["message"].endswith("(killed by SIGABRT)")
    assert cases["sort/fp32/eager"]["status"] == "pass"


def test_no_device_fails_with_a_clear_message(cli: CliRunner, neuron_python: Path) -> None:
    result = cli("selftest", "--python", str(neuron_python), env={"FAKE_NEURON_NO_DEVICE": "1"})
    assert result.returncode == 1
    assert "sees no Neuron device" in result.stdout
    assert "Traceback" not in result.stdout + result.stderr


def test_a_target_without_torch_is_a_clear_error(cli: CliRunner, bare_python: Path) -> None:
    result, doc = selftest(cli, bare_python)
    assert result.returncode == 1
    assert doc["problem"]["kind"] == "no-torch"
    assert str(bare_python) in doc["problem"]["message"]


def test_the_quick_level_passes_on_cpu(cli: CliRunner, torch_python: Path) -> None:
    result, doc = selftest(cli, torch_python, "--device", "cpu")
    assert result.returncode == 0, doc["details"]
    cases = by_name(doc)
    assert all(c["status"] == "pass" for c in cases.values())
    assert cases["float64/fp64/eager"]["behaviour"] == "float64 is computed natively"
    assert cases["dynamic_shapes/fp32/compile"]["behaviour"].endswith("is accepted")
    assert all(c["fallback_ops"] is None for c in cases.values())
    assert doc["info"]["compile_backend"] == "aot_eager"


def test_the_standard_level_adds_an_all_reduce_over_two_processes(
    cli: CliRunner, torch_python: Path, neuron_python: Path
) -> None:
    result, doc = selftest(
        cli, torch_python, "--device", "cpu", "--level", "standard", "--only", "allreduce"
    )
    assert result.returncode == 0, doc["details"]
    (case,) = doc["cases"]
    assert case["status"] == "pass" and case["metrics"]["backend"] == "gloo"
    assert [c["tensor"] for c in case["comparisons"]] == ["rank 0", "rank 1"]
    assert all(c["mismatched"] == 0 and c["rtol"] == 0 for c in case["comparisons"])
    result, doc = selftest(cli, neuron_python, "--level", "standard", "--only", "allreduce")
    assert result.returncode == 0, doc["details"]
    assert doc["cases"][0]["metrics"]["backend"] == "neuron"


def test_the_long_level_reports_throughput_against_the_chip_peak(
    cli: CliRunner, torch_python: Path
) -> None:
    result, doc = selftest(
        cli,
        torch_python,
        "--device",
        "cpu",
        "--level",
        "long",
        "--only",
        "matmul_throughput/fp32",
        "--only",
        "copy_bandwidth",
        "--chip",
        "trainium2",
    )
    assert result.returncode == 0, doc["details"]
    cases = by_name(doc)
    matmul = cases["matmul_throughput/fp32/eager"]["metrics"]
    assert matmul["rounds"] == 5 and matmul["tflops"] > 0
    assert matmul["peak_tflops_per_device"] == pytest.approx(181.0 / 4)  # fp32, 4 logical cores
    assert matmul["fraction_of_peak"] == pytest.approx(matmul["tflops"] / (181.0 / 4))
    assert cases["copy_bandwidth/fp32/eager"]["metrics"]["gbps"] > 0
    assert doc["peak"]["chip"] == "Trainium2" and doc["peak"]["lnc"] == 2


def test_junit_output(cli: CliRunner, neuron_python: Path, tmp_path: Path) -> None:
    report = tmp_path / "selftest.xml"
    env = {"FAKE_NEURON_WRONG_OPS": "aten::cumsum"}
    result = cli(
        "selftest",
        "--python",
        str(neuron_python),
        "--only",
        "cumsum/fp32",
        "--only",
        "float64",
        "--format",
        "junit",
        "--output",
        str(report),
        env=env,
    )
    assert result.returncode == 1 and result.stdout == ""
    suite = assert_valid_junit(report).find("testsuite")
    assert suite is not None
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("3", "2", "1")
    failure = suite.find("testcase[@name='cumsum/fp32/eager']/failure")
    assert failure is not None and "max rel 5.0e-02" in (failure.get("message") or "")


def test_list_shows_the_cases_of_a_level(cli: CliRunner) -> None:
    quick = cli("selftest", "--list")
    assert quick.returncode == 0
    rows = [line.split()[0] for line in quick.stdout.splitlines() if line.strip()]
    assert "sdpa" in rows and "allreduce" not in rows
    assert "--level standard adds: allreduce" in quick.stdout
    long = cli("selftest", "--list", "--level", "long", "--format", "json")
    doc = json.loads(long.stdout)
    assert doc["schema"] == "neuron-env/selftest-list/v1"
    assert {"allreduce", "matmul_throughput", "copy_bandwidth"} <= {c["case"] for c in doc["cases"]}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--only", "nonesuch"], "No self-test case matches 'nonesuch'"),
        (["--only", "allreduce"], "Add --level standard."),
        (["--level", "extreme"], "'extreme' is not one of"),
        (["--chip", "trainium9", "--device", "cpu"], "Unknown chip 'trainium9'"),
        (["--instance-type", "m5.large", "--device", "cpu"], "No Trainium chip is known"),
    ],
)
def test_bad_input_exits_2(cli: CliRunner, args: list[str], message: str) -> None:
    result = cli("selftest", *args)
    assert result.returncode == 2
    assert message in result.stderr
