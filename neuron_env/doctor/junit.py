"""JUnit XML: the doctor's report, through the one writer
(:func:`neuron_env.output.junit_xml.write_junit`).

The doctor's report is one testsuite per category, one testcase per check. Failures and probe
errors map to ``<failure>`` and ``<error>``, skipped checks to ``<skipped>``, and so do checks
that need Trainium hardware on a host without a Neuron device (the run's exit 3 says it);
warnings pass (their text in the suite's ``<system-out>``) unless the run was strict, where they
fail. The fleet report (:mod:`neuron_env.fleet.output`) and the self-test write through
:func:`write_junit` too.
"""

from __future__ import annotations

from neuron_env.checks.model import CATEGORIES, DoctorReport, Finding, Summary
from neuron_env.output.junit_xml import Case, Suite, write_junit

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


def _case(finding: Finding, summary: Summary) -> Case:
    classname = f"neuron-env.{finding.category}"
    body = "\n".join(
        part for part in (finding.detail, finding.fix and f"fix: {finding.fix}") if part
    )
    status = _effective(finding, summary)
    if summary.waits_for_hardware(finding):  # not failed: not judgeable off a Trainium host
        message = f"needs Trainium hardware (this host has no Neuron device): {finding.summary}"
        return Case(classname, finding.check, "skipped", message)
    if status == "fail":
        return Case(
            classname, finding.check, "failure", finding.summary, finding.status, body or None
        )
    if status == "error":
        return Case(classname, finding.check, "error", finding.summary, "probe-error", body or None)
    if status == "skip":
        return Case(classname, finding.check, "skipped", finding.summary)
    allowed = summary.allowed_by.get(finding.check, "allowed")
    label = finding.status.upper() + (f" ({allowed})" if summary.is_allowed(finding) else "")
    text = f"{label}: {finding.summary}" + (f"\n{body}" if body else "")
    return Case(classname, finding.check, text=text)


def _effective(finding: Finding, summary: Summary) -> str:
    """How the finding counts: allowed problems pass; warnings fail when strict."""
    if summary.is_allowed(finding):
        return "ok"
    if summary.strict and finding.status == "warn":
        return "fail"
    return finding.status
