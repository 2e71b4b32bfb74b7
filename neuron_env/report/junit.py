"""JUnit XML: one testsuite per category, one testcase per check.

Failures and probe errors map to ``<failure>`` and ``<error>``, skipped checks to ``<skipped>``;
warnings pass (with ``<system-out>``) unless the run was strict, where they fail.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from neuron_env.checks.model import CATEGORIES, DoctorReport, Finding, Summary
from neuron_env.escape import xml

SUITE_NAME = "neuron-env doctor"


def render_junit(report: DoctorReport) -> str:
    findings, summary = list(report.findings), report.summary
    root = ET.Element("testsuites", {"name": SUITE_NAME, **_counts(findings, summary)})
    for category in CATEGORIES:
        members = [f for f in findings if f.category == category]
        if members:
            root.append(_suite(category, members, summary))
    return to_xml(root)


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


def _suite(category: str, findings: Sequence[Finding], summary: Summary) -> ET.Element:
    suite = ET.Element(
        "testsuite", {"name": f"neuron-env.{category}", **_counts(findings, summary)}
    )
    for finding in findings:
        suite.append(_case(finding, summary))
    return suite


def _case(finding: Finding, summary: Summary) -> ET.Element:
    case = ET.Element("testcase", classname=f"neuron-env.{finding.category}", name=finding.check)
    case.set("time", "0")
    body = "\n".join(
        part for part in (finding.detail, finding.fix and f"fix: {finding.fix}") if part
    )
    status = _effective(finding, summary)
    if status == "fail":
        element = ET.SubElement(case, "failure", message=finding.summary, type=finding.status)
        element.text = body or None
    elif status == "error":
        element = ET.SubElement(case, "error", message=finding.summary, type="probe-error")
        element.text = body or None
    elif status == "skip":
        ET.SubElement(case, "skipped", message=finding.summary)
    else:
        out = ET.SubElement(case, "system-out")
        label = finding.status.upper() + (" (allowed)" if summary.is_allowed(finding) else "")
        out.text = f"{label}: {finding.summary}" + (f"\n{body}" if body else "")
    return case


def _effective(finding: Finding, summary: Summary) -> str:
    """How the finding counts: allowed problems pass; warnings fail when strict."""
    if summary.is_allowed(finding):
        return "ok"
    if summary.strict and finding.status == "warn":
        return "fail"
    return finding.status


def _counts(findings: Sequence[Finding], summary: Summary) -> dict[str, str]:
    statuses = [_effective(f, summary) for f in findings]
    return {
        "tests": str(len(findings)),
        "failures": str(statuses.count("fail")),
        "errors": str(statuses.count("error")),
        "skipped": str(statuses.count("skip")),
        "time": "0",
    }
