"""JUnit reports checked against the schemas CI systems read them with (tests/data/junit)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import xmlschema

from tests.support.cli import DATA

JENKINS_XUNIT = xmlschema.XMLSchema(DATA / "junit" / "jenkins-xunit-junit-10.xsd")
ANT_JUNIT = xmlschema.XMLSchema(DATA / "junit" / "ant-junit.xsd")


def assert_valid_junit(report: Path | str) -> ET.Element:
    """Validate a JUnit file (a path) or document (a string) against the Jenkins xUnit and the
    Ant JUnit schemas; its root element, parsed."""
    text = report.read_text(encoding="utf-8") if isinstance(report, Path) else report
    for schema in (JENKINS_XUNIT, ANT_JUNIT):
        schema.validate(text)
    return ET.fromstring(text)


def totals(root: ET.Element) -> dict[str, int]:
    """The counts summed over the suites (``<testsuites>`` carries none: Ant's schema)."""
    keys = ("tests", "failures", "errors", "skipped")
    return {k: sum(int(s.get(k, "0")) for s in root.iter("testsuite")) for k in keys}
