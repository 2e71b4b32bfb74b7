"""Self-test and smoke results as JSON payloads and JUnit XML (layout only, no decisions)."""

from __future__ import annotations

import dataclasses
from typing import Any

from neuron_env.output.junit_xml import Case, Outcome, Suite, write_junit
from neuron_env.selftest.models import CaseResult, SmokeResult, SuiteResult
from neuron_env.serialize import to_jsonable
from neuron_env.worker.events import finite

JUNIT_FAILURE: dict[str, Outcome] = {
    "fail": "failure",
    "fallback": "failure",
    "error": "error",
    "timeout": "error",
}


def command_name(result: SuiteResult) -> str:
    """The JSON envelope's command: ``smoke`` or ``selftest``."""
    return "smoke" if isinstance(result, SmokeResult) else "selftest"


def payload(result: SuiteResult) -> dict[str, Any]:
    """The JSON document's fields (the envelope is added by the CLI)."""
    return {
        "ok": result.ok,
        "summary": result.summary,
        "details": result.details,
        "level": result.level,
        "device": result.device,
        "python": result.python,
        "info": to_jsonable(result.info),
        "problem": to_jsonable(result.problem),
        "counts": result.counts(),
        "wall_s": result.wall_s,
        "allow_fallback": result.allow_fallback,
        "peak": to_jsonable(result.peak),
        "cases": [case_payload(c) for c in result.cases],
    }


def case_payload(case: CaseResult) -> dict[str, Any]:
    fields = finite(to_jsonable(dataclasses.asdict(case)))
    return {
        "name": case.name,
        "case": case.case,
        "dtype": case.dtype,
        "mode": case.mode,
        **{k: v for k, v in fields.items() if k != "name"},
        "fallback_tracked": case.fallback_ops is not None,
    }


def junit(result: SuiteResult) -> str:
    """JUnit XML: one testcase per variant; fail/fallback are failures, error/timeout errors,
    unsupported/skipped are skipped (with the reason); a problem is the ``setup`` case's error."""
    name = f"neuron-env {command_name(result)} ({result.device})"
    cases = [_testcase(case) for case in result.cases]
    if result.problem is not None:
        problem = result.problem
        cases.append(Case("setup", "worker", "error", problem.message, text=problem.hint))
    suite = Suite(name, cases, properties=_properties(result), time=result.wall_s)
    return write_junit(name, [suite])


def _properties(result: SuiteResult) -> dict[str, str]:
    values = {"level": result.level, "device": result.device, "python": result.python}
    if result.info is not None:
        values.update(torch=result.info.torch, torch_neuronx=str(result.info.torch_neuronx))
    return values


def _testcase(case: CaseResult) -> Case:
    classname, seconds = f"selftest.{case.case}", case.wall_s or 0.0
    outcome = JUNIT_FAILURE.get(case.status)
    if outcome is not None:
        return Case(classname, case.name, outcome, case.message, case.status, _body(case), seconds)
    if case.status in ("unsupported", "skipped"):
        message = f"{case.status}: {case.message}"
        return Case(classname, case.name, "skipped", message, time=seconds)
    return Case(classname, case.name, time=seconds)


def _body(case: CaseResult) -> str:
    lines = [
        f"{c.tensor}: ok={c.ok} mismatched={c.mismatched}/{c.total} max_abs={c.max_abs} "
        f"max_rel={c.max_rel} rtol={c.rtol} atol={c.atol}"
        for c in case.comparisons
    ]
    if case.fallback_ops:
        lines.append("fell back to CPU: " + ", ".join(case.fallback_ops))
    return "\n".join(lines)
