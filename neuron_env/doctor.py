"""``neuron-env doctor``: facts + checks → a report; the one place probing meets judging."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass

from neuron_env.checks.context import build_context
from neuron_env.checks.model import DoctorReport, summarize
from neuron_env.checks.registry import run_checks, select_checks
from neuron_env.errors import EXIT_FAILED, BadInput
from neuron_env.facts import HostFacts
from neuron_env.matrix import Matrix


@dataclass(frozen=True)
class DoctorOptions:
    release: str | None = None
    torch: str | None = None
    only: Sequence[str] = ()
    skipped: Sequence[str] = ()
    strict: bool = False
    level: int = 0
    allow: Sequence[str] = ()


def judge(matrix: Matrix, facts: HostFacts, options: DoctorOptions) -> DoctorReport:
    """Run the selected checks over ``facts`` (from a live host or a snapshot)."""
    checks = select_checks(options.only, options.skipped, allow=options.allow, level=options.level)
    if not checks:  # a gate that checks nothing must not pass
        raise BadInput(
            "The --check/--skip selection leaves no check to run, so nothing could be judged.",
            hint="See the check ids with 'neuron-env doctor --list-checks'.",
        )
    ctx = build_context(matrix, facts, release=options.release, torch=options.torch)
    findings = tuple(run_checks(facts, ctx, checks))
    summary = summarize(findings, strict=options.strict, allow=options.allow)
    if all(f.status == "skip" for f in findings):  # every selected check skipped: nothing judged
        summary = dataclasses.replace(summary, status="fail", exit_code=EXIT_FAILED)
    return DoctorReport(
        findings=findings,
        summary=summary,
        release=str(ctx.release.version),
        release_reason=ctx.release_reason,
        torch=str(ctx.pairing.torch) if ctx.pairing else None,
        torch_reason=ctx.torch_reason,
        facts=facts,
        level=options.level,
    )
