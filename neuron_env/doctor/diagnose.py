"""``neuron-env doctor``: facts + checks → a report; the one place probing meets judging."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from packaging.version import Version

from neuron_env.checks.context import build_context, is_own_environment
from neuron_env.checks.hardware import waiting_for_hardware
from neuron_env.checks.legacy_host import headline
from neuron_env.checks.model import Context, DoctorReport, summarize
from neuron_env.checks.registry import run_checks, select_checks
from neuron_env.doctor.request import DoctorOptions
from neuron_env.errors import EXIT_FAILED, BadInput, UnsupportedCombination
from neuron_env.facts import HostFacts
from neuron_env.matrix import Matrix
from neuron_env.wording import join_words


def check_request(matrix: Matrix, release: str | None, torch: str | None) -> None:
    """``--release`` names a known release and ``--torch`` a PyTorch it pairs (without
    ``--release``: that some known release pairs); else bad input, said once, before judging.
    """
    if torch is None:
        if release is not None:
            matrix.get(release)
        return
    from neuron_env.matrix import Request, resolve_target

    errors: list[BadInput] = []
    for candidate in [release] if release else [str(r.version) for r in matrix.releases]:
        try:
            resolve_target(matrix, Request(torch=torch, release=candidate))
            return
        except BadInput as exc:
            errors.append(exc)
    if release or not isinstance(errors[-1], UnsupportedCombination):
        raise errors[-1]
    paired = sorted({p.torch_minor for r in matrix.releases for p in r.pairings}, key=Version)
    raise UnsupportedCombination(
        f"No known Neuron release pairs torch-neuronx with PyTorch {torch}; "
        f"they pair PyTorch {join_words(paired)}.",
        hint="See them with 'neuron-env matrix list'.",
    )


def judge(matrix: Matrix, facts: HostFacts, options: DoctorOptions) -> DoctorReport:
    """Run the selected checks over ``facts`` (from a live host or a snapshot)."""
    checks = select_checks(options.only, options.skipped, allow=options.allow, level=options.level)
    ctx = build_context(matrix, facts, release=options.release, torch=options.torch)
    findings = tuple(run_checks(facts, ctx, checks))
    hardware = waiting_for_hardware(checks, facts, ctx.release) if options.hardware_optional else ()
    summary = summarize(findings, strict=options.strict, allow=options.allow, hardware=hardware)
    reasons = {c: r for c, r in options.allow_reasons.items() if c in summary.allowed}
    summary = dataclasses.replace(
        summary, allowed_reasons=reasons, allowed_by=_allowed_by(summary.allowed, options)
    )
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
        next_step=_create_first(facts, ctx),
        unlisted_os=ctx.unlisted_os,
        legacy_host=headline(ctx.legacy_family) if ctx.legacy_family else "",
        needs={c.id: c.needs for c in checks},
        config=options.config,
        config_ignored=options.config_ignored,
    )


def _allowed_by(allowed: Iterable[str], options: DoctorOptions) -> dict[str, str]:
    """Who allowed each check: the project file, with its reason, or the --allow flag."""
    return {
        check: f"allowed by {options.config}: {options.allow_reasons[check]}"
        if options.config and check in options.allow_reasons
        else "allowed by --allow"
        for check in allowed
    }


def _create_first(facts: HostFacts, ctx: Context) -> str:
    """The install command, when the target is neuron-env's own environment without PyTorch."""
    python = facts.python
    if python is None or "torch" in python.distributions or not is_own_environment(python):
        return ""
    if ctx.legacy_family:  # TorchNeuron does not run on this host: no environment for it
        return ""
    return ctx.install_command()
