"""The doctor's JSON document: the versioned envelope with verdict, findings and facts."""

from __future__ import annotations

import shlex
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
            "allowed_by": summary.allowed_by,
            "config": report.config,
            "config_ignored": [{"path": p, "reason": r} for p, r in report.config_ignored],
            "needs_hardware": summary.needs_hardware,
            "counts": summary.counts,
            "release": report.release,
            "release_reason": report.release_reason,
            "torch": report.torch,
            "torch_reason": report.torch_reason,
            "level": report.level,
            "target": _target(report),
            "next": [{"argv": shlex.split(step), "shell": step} for step in _next_steps(report)],
            "findings": report.findings,
            "facts": report.facts,
        },
        outcome(report),
    )


def _target(report: DoctorReport) -> dict[str, Any]:
    """The interpreter judged and how it was chosen (``--python``, ``$VIRTUAL_ENV``, ...)."""
    python = report.facts.python
    return {
        "python": python.executable if python else None,
        "version": python.version if python else None,
        "chosen_by": report.target_chosen_by or None,
    }


def _next_steps(report: DoctorReport) -> list[str]:
    """The commands the text report prints as the next step, exactly as printed."""
    return [report.next_step] if report.next_step else []
