"""Self-test and smoke results as JSON payloads and JUnit XML (layout only, no decisions)."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from typing import Any

from neuron_env.selftest.models import CaseResult, SmokeResult, SuiteResult
from neuron_env.serialize import to_jsonable
from neuron_env.worker.events import finite

JUNIT_FAILURE = {"fail": "failure", "fallback": "failure", "error": "error", "timeout": "error"}


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
    unsupported/skipped are skipped (with the reason)."""
    name = f"neuron-env {command_name(result)} ({result.device})"
    suite = ET.Element("testsuite", name=name, time=f"{result.wall_s:.3f}")
    _properties(suite, result)
    for case in result.cases:
        suite.append(_testcase(case))
    if result.problem is not None:
        setup = ET.SubElement(suite, "testcase", classname="setup", name="worker", time="0")
        ET.SubElement(setup, "error", message=result.problem.message).text = result.problem.hint
    _count(suite)
    root = ET.Element("testsuites")
    root.append(suite)
    ET.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _properties(suite: ET.Element, result: SuiteResult) -> None:
    props = ET.SubElement(suite, "properties")
    values = {"level": result.level, "device": result.device, "python": result.python}
    if result.info is not None:
        values.update(torch=result.info.torch, torch_neuronx=str(result.info.torch_neuronx))
    for key, value in values.items():
        ET.SubElement(props, "property", name=key, value=value)


def _testcase(case: CaseResult) -> ET.Element:
    seconds = case.wall_s or 0.0
    element = ET.Element(
        "testcase", classname=f"selftest.{case.case}", name=case.name, time=f"{seconds:.3f}"
    )
    tag = JUNIT_FAILURE.get(case.status)
    if tag is not None:
        ET.SubElement(element, tag, message=case.message, type=case.status).text = _body(case)
    elif case.status in ("unsupported", "skipped"):
        ET.SubElement(element, "skipped", message=f"{case.status}: {case.message}")
    return element


def _body(case: CaseResult) -> str:
    lines = [
        f"{c.tensor}: ok={c.ok} mismatched={c.mismatched}/{c.total} max_abs={c.max_abs} "
        f"max_rel={c.max_rel} rtol={c.rtol} atol={c.atol}"
        for c in case.comparisons
    ]
    if case.fallback_ops:
        lines.append("fell back to CPU: " + ", ".join(case.fallback_ops))
    return "\n".join(lines)


def _count(suite: ET.Element) -> None:
    cases = suite.findall("testcase")
    suite.set("tests", str(len(cases)))
    for tag, attribute in (("failure", "failures"), ("error", "errors"), ("skipped", "skipped")):
        suite.set(attribute, str(sum(1 for c in cases if c.find(tag) is not None)))
