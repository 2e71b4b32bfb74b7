"""JUnit XML: the one writer (:func:`write_junit`) every JUnit report goes through.

A report builds :class:`Suite` and :class:`Case` objects and hands them to :func:`write_junit`:
the doctor's and the fleet's (:mod:`neuron_env.doctor.junit`, :mod:`neuron_env.fleet.output`) and
the self-test's (:mod:`neuron_env.selftest.report`). Standard library only, so the self-test's
side can use it without the renderers.
"""

from __future__ import annotations

import socket
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import field
from datetime import datetime, timezone
from typing import Literal

from neuron_env.escape import xml
from neuron_env.frozen import frozen

Outcome = Literal["pass", "failure", "error", "skipped"]


@frozen
class Case:
    """One testcase: ``message``/``kind`` are its failure's, error's or skip's attributes; ``text``
    the body of its failure or error, or (when it passes) its line ``name: text`` in the suite's
    ``<system-out>``; ``time`` its seconds (None: written as 0)."""

    classname: str
    name: str
    outcome: Outcome = "pass"
    message: str = ""
    kind: str | None = None
    text: str | None = None
    time: float | None = None


@frozen
class Suite:
    """One testsuite; ``properties`` (when any) become its ``<properties>``, ``time`` its seconds
    (None: written as 0)."""

    name: str
    cases: Sequence[Case]
    properties: Mapping[str, str] = field(default_factory=dict)
    time: float | None = None


def write_junit(name: str, suites: Sequence[Suite], *, when: datetime | None = None) -> str:
    """The JUnit document named ``name``: ``<testsuites>`` of ``<testsuite>`` elements, counts
    summed from the cases, ``when`` (default: now) as each suite's UTC timestamp.

    The layout is the one both the Jenkins xUnit plugin's schema (junit-10.xsd) and Apache Ant's
    JUnit schema accept, since CI systems read one or the other: ``<testsuites>`` carries no
    attributes (Ant allows none; each suite has its counts), each suite has ``package``, ``id``,
    ``timestamp``, ``hostname``, ``<properties>`` and, last, ``<system-out>``/``<system-err>``,
    where a passing case's text goes (Ant allows no output inside a testcase). ``name`` becomes
    each suite's ``package``.
    """
    utc = (when or datetime.now(timezone.utc)).astimezone(timezone.utc)
    stamp = utc.strftime("%Y-%m-%dT%H:%M:%S")  # Ant's schema: no time zone (UTC, said here)
    root = ET.Element("testsuites")
    for index, suite in enumerate(suites):
        root.append(_suite_element(suite, index, name, stamp))
    return to_xml(root)


def _suite_element(suite: Suite, index: int, package: str, stamp: str) -> ET.Element:
    attributes = {
        "name": suite.name, **_counts(suite.cases, suite.time), "timestamp": stamp,
        "hostname": socket.gethostname() or "localhost", "package": package, "id": str(index),
    }  # fmt: skip
    element = ET.Element("testsuite", attributes)
    properties = ET.SubElement(element, "properties")
    for key, value in suite.properties.items():
        ET.SubElement(properties, "property", name=key, value=value)
    element.extend(_case_element(case) for case in suite.cases)
    output = [f"{case.name}: {case.text}" for case in suite.cases if _is_output(case)]
    ET.SubElement(element, "system-out").text = "\n".join(output) or None
    ET.SubElement(element, "system-err")
    return element


def _is_output(case: Case) -> bool:
    return case.outcome == "pass" and case.text is not None


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


def _case_element(case: Case) -> ET.Element:
    element = ET.Element("testcase", classname=case.classname, name=case.name)
    element.set("time", _seconds(case.time))
    if case.outcome in ("failure", "error"):
        # Ant's schema requires a type; without a kind of its own, the outcome names it.
        attributes = {"message": case.message, "type": case.kind or case.outcome}
        ET.SubElement(element, case.outcome, attributes).text = case.text
    elif case.outcome == "skipped":
        ET.SubElement(element, "skipped", message=case.message)
    return element


def _counts(cases: Sequence[Case], seconds: float | None) -> dict[str, str]:
    outcomes = [case.outcome for case in cases]
    return {
        "tests": str(len(cases)),
        "failures": str(outcomes.count("failure")),
        "errors": str(outcomes.count("error")),
        "skipped": str(outcomes.count("skipped")),
        "time": _seconds(seconds),
    }


def _seconds(value: float | None) -> str:
    return "0" if value is None else f"{value:.3f}"
