"""JUnit XML: the one writer (:func:`write_junit`), and the doctor's report in it.

The doctor's report is one testsuite per category, one testcase per check. Failures and probe
errors map to ``<failure>`` and ``<error>``, skipped checks to ``<skipped>``; warnings pass (with
``<system-out>``) unless the run was strict, where they fail. The fleet report
(:mod:`neuron_env.report.fleet`) writes through :func:`write_junit` too.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from neuron_env.checks.model import CATEGORIES, DoctorReport, Finding, Summary
from neuron_env.escape import xml

Outcome = Literal["pass", "failure", "error", "skipped"]


@dataclass(frozen=True)
class Case:
    """One testcase: ``message``/``kind`` are its failure's, error's or skip's attributes; ``text``
    the body of its failure or error, or (when it passes) its ``<system-out>``."""

    classname: str
    name: str
    outcome: Outcome = "pass"
    message: str = ""
    kind: str | None = None
    text: str | None = None


@dataclass(frozen=True)
class Suite:
    name: str
    cases: Sequence[Case]


def write_junit(name: str, suites: Sequence[Suite]) -> str:
    """The JUnit document: ``<testsuites>`` named ``name``, counts summed from the cases."""
    cases = [case for suite in suites for case in suite.cases]
    root = ET.Element("testsuites", {"name": name, **_counts(cases)})
    for suite in suites:
        element = ET.SubElement(root, "testsuite", {"name": suite.name, **_counts(suite.cases)})
        for case in suite.cases:
            element.append(_case_element(case))
    return to_xml(root)


def _case_element(case: Case) -> ET.Element:
    element = ET.Element("testcase", classname=case.classname, name=case.name)
    element.set("time", "0")
    if case.outcome in ("failure", "error"):
        attributes = {"message": case.message, **({"type": case.kind} if case.kind else {})}
        ET.SubElement(element, case.outcome, attributes).text = case.text
    elif case.outcome == "skipped":
        ET.SubElement(element, "skipped", message=case.message)
    elif case.text is not None:
        ET.SubElement(element, "system-out").text = case.text
    return element


def _counts(cases: Sequence[Case]) -> dict[str, str]:
    outcomes = [case.outcome for case in cases]
    return {
        "tests": str(len(cases)),
        "failures": str(outcomes.count("failure")),
        "errors": str(outcomes.count("error")),
        "skipped": str(outcomes.count("skipped")),
        "time": "0",
    }


SUITE_NAME = "neuron-env doctor"


def render_junit(report: DoctorReport) -> str:
    """The doctor's (or preflight's) report as JUnit XML: a testsuite per category."""
    summary = report.summary
    suites = [
        Suite(f"neuron-env.{category}", [_case(f, summary) for f in members])
        for category in CATEGORIES
        if (members := [f for f in report.findings if f.category == category])
    ]
    return write_junit(SUITE_NAME, suites)


def to_xml(root: ET.Element) -> str:
    """The document, with every character XML 1.0 cannot hold made visible (ESC, NUL, ...).

    Summaries and names come from snapshots; ElementTree would write such characters raw and
    leave a file that no CI system can parse.
    """
    for element in root.iter():
        element.text = xml(element.text) if element.text else element.text
        for key, value in element.attrib.items():
            element.set(key, xml(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(finding: Finding, summary: Summary) -> Case:
    classname = f"neuron-env.{finding.category}"
    body = "\n".join(
        part for part in (finding.detail, finding.fix and f"fix: {finding.fix}") if part
    )
    status = _effective(finding, summary)
    if status == "fail":
        return Case(
            classname, finding.check, "failure", finding.summary, finding.status, body or None
        )
    if status == "error":
        return Case(classname, finding.check, "error", finding.summary, "probe-error", body or None)
    if status == "skip":
        return Case(classname, finding.check, "skipped", finding.summary)
    label = finding.status.upper() + (" (allowed)" if summary.is_allowed(finding) else "")
    text = f"{label}: {finding.summary}" + (f"\n{body}" if body else "")
    return Case(classname, finding.check, text=text)


def _effective(finding: Finding, summary: Summary) -> str:
    """How the finding counts: allowed problems pass; warnings fail when strict."""
    if summary.is_allowed(finding):
        return "ok"
    if summary.strict and finding.status == "warn":
        return "fail"
    return finding.status
