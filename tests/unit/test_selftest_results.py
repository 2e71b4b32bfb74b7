"""Self-test results: the worker's events as models, verdicts, messages, JUnit, the chip peak."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from neuron_env.errors import BadInput
from neuron_env.matrix import load_matrix
from neuron_env.selftest import CaseResult, Peak, Problem, SmokeResult, SuiteResult
from neuron_env.selftest.events import case_result
from neuron_env.selftest.peak import peak_for
from neuron_env.selftest.report import junit, payload
from tests.support.junit import assert_valid_junit

TRAINIUM2 = Peak("Trainium2", {"bf16": 667.0, "fp32": 181.0}, 4, 2, "test")


def comparison(**changes: Any) -> dict[str, Any]:
    base = {"tensor": "output", "ok": True, "mismatched": 0, "total": 64, "rtol": 1e-3,
            "atol": 1e-3, "max_abs": 2e-5, "max_rel": 7e-5, "scale": 4.0, "used": 0.02}  # fmt: skip
    return {**base, **changes}


def event(name: str = "matmul/fp32/eager", **fields: Any) -> dict[str, Any]:
    base = {"event": "result", "name": name, "status": "pass", "comparisons": [comparison()],
            "fallback_ops": [], "first_call_s": 1.5, "steady_s": 0.002, "repeats": 5}  # fmt: skip
    return {**base, **fields}


def suite(*cases: CaseResult, **fields: Any) -> SuiteResult:
    return SuiteResult("quick", "neuron", "/venv/bin/python", None, cases, **fields)


def test_a_passing_case_reads_its_figures_and_tolerance() -> None:
    result = case_result(event(), wall_s=2.0, peak=None)
    assert (result.status, result.case, result.dtype, result.mode) == (
        "pass",
        "matmul",
        "fp32",
        "eager",
    )
    assert result.message == (
        "max rel 7.0e-05, abs 2.0e-05: 2% of the bound (atol 0.001 × scale 4 + rtol 0.001 × |ref|)"
    )
    assert (result.first_call_s, result.steady_s, result.wall_s) == (1.5, 0.002, 2.0)


def test_a_pass_above_atol_reads_as_a_share_of_the_scaled_bound() -> None:
    bf16 = comparison(rtol=0.02, atol=0.02, max_abs=0.25, max_rel=3.9e-3, scale=64.0, used=0.19)
    result = case_result(event(name="matmul/bf16/eager", comparisons=[bf16]), 1.0, None)
    assert result.message == (
        "max rel 3.9e-03, abs 2.5e-01: 19% of the bound (atol 0.02 × scale 64 + rtol 0.02 × |ref|)"
    )


def test_a_failing_case_names_the_tensor_and_how_many_elements_are_off() -> None:
    wrong = comparison(ok=False, mismatched=60, max_rel=0.05, max_abs=0.2, used=1.9)
    grad = comparison(tensor="grad a", ok=False, mismatched=3)
    result = case_result(event(status="fail", comparisons=[wrong, grad]), 1.0, None)
    assert result.message == (
        "output: 60/64 off; max rel 5.0e-02, abs 2.0e-01 (rtol 0.001, atol 0.001); "
        "1 more tensor(s) off"
    )


def test_a_device_that_returns_nan_fails_with_infinite_error_and_valid_json() -> None:
    nan = comparison(ok=False, mismatched=64, max_abs="inf", max_rel="inf", used="inf")
    result = case_result(event(status="fail", comparisons=[nan]), 1.0, None)
    assert math.isinf(result.comparisons[0].max_abs or 0)
    assert "max rel inf" in result.message
    doc = json.loads(json.dumps(payload(suite(result))))  # strict JSON: no NaN/Infinity literals
    assert doc["cases"][0]["comparisons"][0]["max_abs"] == "inf"


def test_fallback_and_unsupported_messages() -> None:
    fell = case_result(event(status="fallback", fallback_ops=["aten::sort"]), 1.0, None)
    assert fell.message == "correct, but fell back to CPU: aten::sort"
    rejected = "torch.compile(dynamic=True) is rejected: Unbounded dynamism is disabled"
    by_design = case_result(
        event(status="unsupported", comparisons=[], behaviour=rejected), 1.0, None
    )
    assert by_design.message == rejected
    untracked = case_result(event(fallback_ops=None), 1.0, None)
    assert untracked.fallback_ops is None


def test_throughput_is_compared_with_one_logical_cores_share_of_the_chip_peak() -> None:
    metrics = {"tflops": 83.375, "tflops_min": 80.0, "tflops_max": 84.0, "rounds": 5, "n": 4096,
               "spread": 0.05}  # fmt: skip
    name = "matmul_throughput/bf16/eager"
    result = case_result(event(name, comparisons=[], metrics=metrics), 10.0, TRAINIUM2)
    assert result.metrics["peak_tflops_per_device"] == 667.0 / 4
    assert result.metrics["fraction_of_peak"] == pytest.approx(0.5)
    assert "83.4 TFLOP/s median of 5 rounds" in result.message
    assert "50% of one device's share of the chip peak" in result.message


def test_the_verdict_counts_fallback_unless_allowed() -> None:
    passed = CaseResult("matmul/fp32/eager", "pass")
    fell = CaseResult("sort/fp32/eager", "fallback", "correct, but fell back to CPU: aten::sort")
    by_design = CaseResult("float64/fp64/eager", "unsupported", "float64 is computed as float32")
    assert suite(passed, by_design).ok
    assert not suite(passed, fell).ok
    assert suite(passed, fell, allow_fallback=True).ok
    failed = suite(passed, fell, by_design, wall_s=3.0)
    assert (
        failed.summary
        == "self-test (quick) on neuron FAILED: 1 pass, 1 fallback, 1 unsupported in 3.0 s"
    )
    assert failed.details == [
        "sort/fp32/eager: fallback — correct, but fell back to CPU: aten::sort",
        "float64/fp64/eager: float64 is computed as float32",
    ]


def test_a_problem_is_the_summary_and_its_hint_a_detail() -> None:
    problem = Problem("no-torch", "torch is not installed in /venv/bin/python.", "Install it.")
    result = SmokeResult("smoke", "neuron", "/venv/bin/python", None, (), problem=problem)
    assert not result.ok
    assert result.summary == "torch is not installed in /venv/bin/python."
    assert result.details == ["Install it."]


def test_junit_maps_statuses_to_failures_errors_and_skips() -> None:
    cases = (
        CaseResult("matmul/fp32/eager", "pass", wall_s=0.5),
        CaseResult("softmax/bf16/eager", "fail", "output: 3/64 off"),
        CaseResult("sort/fp32/eager", "fallback", "fell back"),
        CaseResult("cumsum/fp32/eager", "timeout", "did not finish within 5 s"),
        CaseResult("float64/fp64/eager", "unsupported", "float64 as float32"),
        CaseResult("allreduce/fp32/eager", "skipped", "needs 2 devices"),
    )
    root = assert_valid_junit(junit(suite(*cases)))
    testsuite = root.find("testsuite")
    assert testsuite is not None
    counts = [testsuite.get(k) for k in ("tests", "failures", "errors", "skipped")]
    assert counts == ["6", "2", "1", "2"]
    skipped = testsuite.find("testcase[@name='float64/fp64/eager']/skipped")
    assert skipped is not None and skipped.get("message") == "unsupported: float64 as float32"


def test_junit_reports_a_problem_as_a_setup_error() -> None:
    problem = Problem("no-device", "torch-neuronx sees no Neuron device.", "Run neuron-ls.")
    root = assert_valid_junit(junit(suite(problem=problem)))
    error = root.find("testsuite/testcase[@classname='setup']/error")
    assert error is not None and error.get("message") == "torch-neuronx sees no Neuron device."


def test_the_peak_comes_from_the_matrix_by_chip_or_instance_type(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    release = load_matrix().latest()
    monkeypatch.delenv("NEURON_LOGICAL_NC_CONFIG", raising=False)
    by_chip = peak_for(release, chip="trainium2")
    assert (by_chip.chip, by_chip.tflops["bf16"], by_chip.logical_cores, by_chip.lnc) == (
        "Trainium2",
        667.0,
        4,
        2,
    )
    assert peak_for(release, instance_type="trn2.48xlarge") == by_chip
    monkeypatch.setenv("NEURON_LOGICAL_NC_CONFIG", "1")
    assert peak_for(release, chip="trainium2").logical_cores == 8


def test_an_unknown_chip_or_instance_type_is_bad_input() -> None:
    release = load_matrix().latest()
    with pytest.raises(BadInput, match="Unknown chip 'trainium9'"):
        peak_for(release, chip="trainium9")
    with pytest.raises(
        BadInput, match=r"No Trainium chip is known for instance type 'inf2\.xlarge'"
    ):
        peak_for(release, instance_type="inf2.xlarge")
