"""JUnit XML: one testsuite per category, one testcase per check.

Failures and probe errors map to ``<failure>`` and ``<error>``, skipped checks to ``<skipped>``;
warnings pass (with ``<system-out>``) unless the run was strict, where they fail.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from neuron_env.checks.model import CATEGORIES, DoctorReport, Finding

SUITE_NAME = "neuron-env doctor"


def render_junit(report: DoctorReport) -> str:
    findings = list(report.findings)
    root = ET.Element(
        "testsuites", {"name": SUITE_NAME, **_counts(findings, report.summary.strict)}
    )
    for category in CATEGORIES:
        members = [f for f in findings if f.category == category]
        if members:
            root.append(_suite(category, members, report.summary.strict))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _suite(category: str, findings: Sequence[Finding], strict: bool) -> ET.Element:
    suite = ET.Element("testsuite", {"name": f"neuron-env.{category}", **_counts(findings, strict)})
    for finding in findings:
        suite.append(_case(finding, strict))
    return suite


def _case(finding: Finding, strict: bool) -> ET.Element:
    case = ET.Element("testcase", classname=f"neuron-env.{finding.category}", name=finding.check)
    case.set("time", "0")
    body = "\n".join(
        part for part in (finding.detail, finding.fix and f"fix: {finding.fix}") if part
    )
    if finding.status == "fail" or (strict and finding.status == "warn"):
        element = ET.SubElement(case, "failure", message=finding.summary, type=finding.status)
        element.text = body or None
    elif finding.status == "error":
        element = ET.SubElement(case, "error", message=finding.summary, type="probe-error")
        element.text = body or None
    elif finding.status == "skip":
        ET.SubElement(case, "skipped", message=finding.summary)
    else:
        out = ET.SubElement(case, "system-out")
        out.text = f"{finding.status.upper()}: {finding.summary}" + (f"\n{body}" if body else "")
    return case


def _counts(findings: Sequence[Finding], strict: bool) -> dict[str, str]:
    failed = {"fail", "warn"} if strict else {"fail"}
    return {
        "tests": str(len(findings)),
        "failures": str(sum(f.status in failed for f in findings)),
        "errors": str(sum(f.status == "error" for f in findings)),
        "skipped": str(sum(f.status == "skip" for f in findings)),
        "time": "0",
    }
