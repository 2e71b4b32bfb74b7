"""GitHub Actions: a step-summary table in Markdown and ``::error``/``::warning`` annotations."""

from __future__ import annotations

from neuron_env.checks.model import DoctorReport, Finding
from neuron_env.escape import github_data, github_property, markdown_cell, markdown_code

ICONS = {"ok": "✅", "warn": "⚠️", "fail": "❌", "skip": "⏭️", "error": "❗"}


def render_markdown(report: DoctorReport, title: str = "neuron-env doctor") -> str:
    """The doctor's (or preflight's) report as GitHub Markdown (a step summary) under ``title``."""
    lines = [
        f"### {title}: {report.summary.status.upper()}",
        "",
        markdown_cell(
            f"Neuron {report.release} ({report.release_reason}); "
            f"PyTorch {report.torch or 'not chosen'} ({report.torch_reason})."
        ),
        "",
        _counts_line(report),
        "",
        "| | check | result | fix |",
        "|---|---|---|---|",
    ]
    lines += [_row(f, _allowed_by(report, f)) for f in report.findings]
    return "\n".join(lines) + "\n"


def _counts_line(report: DoctorReport) -> str:
    """``12 ok; 2 fail allowed (driver.module, driver.devices)``: allowed ones counted apart."""
    allowed = [f for f in report.findings if report.summary.is_allowed(f) and f.status != "skip"]
    waiting = report.summary.needs_hardware
    counted = [f.status for f in report.findings if f not in allowed and f.check not in waiting]
    line = ", ".join(f"{counted.count(s)} {s}" for s in report.summary.counts if s in counted)
    if allowed:
        kinds = ", ".join(sorted({f.status for f in allowed}))
        ids = ", ".join(f"`{f.check}`" for f in allowed)
        line += f"; {len(allowed)} {kinds} allowed ({ids})"
    if waiting:
        ids = ", ".join(f"`{check}`" for check in waiting)
        line += f"; {len(waiting)} need Trainium hardware ({ids}: this host has no Neuron device)"
    return line or "no checks ran"


def _allowed_by(report: DoctorReport, finding: Finding) -> str | None:
    if not report.summary.is_allowed(finding):
        return None
    return report.summary.allowed_by.get(finding.check, "allowed")


def _row(finding: Finding, allowed: str | None) -> str:
    """``allowed``: who allowed the finding to fail (``allowed by FILE: reason``), or None."""
    note = f" *({markdown_cell(allowed)})*" if allowed else ""
    summary = markdown_cell(finding.summary) + note
    cells = [ICONS[finding.status], markdown_code(finding.check), summary]
    cells.append(markdown_code(finding.fix))
    return "| " + " | ".join(cells) + " |"


def workflow_commands(report: DoctorReport) -> list[str]:
    """Workflow commands for failures, errors and warnings (warnings as errors when strict)."""
    lines = []
    for finding in report.findings:
        allowed = report.summary.is_allowed(finding)
        waits = report.summary.waits_for_hardware(finding)
        level = _level(finding.status, report.summary.strict, allowed or waits)
        if level:
            by = report.summary.allowed_by.get(finding.check, "allowed")
            note = f" ({by}; does not fail the run)" if allowed else ""
            note = " (needs Trainium hardware: this host has no Neuron device)" if waits else note
            message = finding.summary + note + (f"\nfix: {finding.fix}" if finding.fix else "")
            title = escape_property(f"neuron-env {finding.check}")
            lines.append(f"::{level} title={title}::{escape_data(message)}")
    return lines


def _level(status: str, strict: bool, allowed: bool) -> str | None:
    if allowed and status != "ok":
        return "warning"
    if status in ("fail", "error") or (strict and status == "warn"):
        return "error"
    return "warning" if status == "warn" else None


# The workflow-command escapes, by their earlier names.
escape_data = github_data
escape_property = github_property
