"""The doctor's JSON document: the versioned envelope with verdict, findings and facts."""

from __future__ import annotations

from typing import Any

from neuron_env.checks.model import DoctorReport
from neuron_env.doctor.output import outcome
from neuron_env.output.emit import document

COMMAND = "doctor"


def to_document(report: DoctorReport, command: str = COMMAND) -> dict[str, Any]:
    """The doctor's (or preflight's) report as its versioned JSON envelope, facts included."""
    summary = report.summary
    return document(
        command,
        {
            "strict": summary.strict,
            "allowed": summary.allowed,
            "allowed_reasons": summary.allowed_reasons,
            "counts": summary.counts,
            "release": report.release,
            "release_reason": report.release_reason,
            "torch": report.torch,
            "torch_reason": report.torch_reason,
            "level": report.level,
            "findings": report.findings,
            "facts": report.facts,
        },
        outcome(report),
    )
