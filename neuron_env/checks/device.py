"""Device checks: judge what the smoke test and the self-test suite measured."""

from __future__ import annotations

import re
import shlex

from neuron_env.checks.model import Context, Verdict, fail, ok, skip
from neuron_env.facts import DeviceRun, HostFacts


def check_smoke(facts: HostFacts, ctx: Context) -> Verdict:
    """``device.smoke`` (level 1): the smoke test's result, with the command that reruns it."""
    assert facts.device is not None
    rerun = f"{ctx.program} smoke{_where(facts, ctx)}"
    return _judge(facts.device.smoke, "smoke", rerun, ctx)


def _install_first(ctx: Context, hint: str) -> str:
    """Where torch is missing the worker advises an install with an example PyTorch ("e.g."; it
    cannot know the matrix): the doctor says this host's exact command (its release, pairing and
    environment) instead. The worker's other install advice names the torch it found: kept."""
    if "(e.g. '" not in hint or "install --torch" not in hint:
        return ""
    return (
        f"Install TorchNeuron with '{ctx.install_command()}', or pass --python for the "
        "interpreter that has torch."
    )


def _where(facts: HostFacts, ctx: Context) -> str:
    """`` --device D --python PY`` (quoted: both come from the facts); the defaults left out."""
    assert facts.device is not None
    device = facts.device.device
    flags = "" if device in ("", "neuron") else f" --device {shlex.quote(device)}"
    return flags + (f" --python {ctx.python}" if ctx.python else "")


def _doctor_hint(hint: str) -> str:
    """The worker's hint without advice for another command's flags (doctor has no --device)."""
    hint = re.sub(r",? or test another device with --device \S+?(?=\.)", "", hint)
    kept = [s for s in re.split(r"(?<=\.)\s+", hint) if "--device" not in s]
    return " ".join(kept).strip()


def check_selftest(facts: HostFacts, ctx: Context) -> Verdict:
    """``device.selftest`` (level 2): the standard self-test's result; skipped when the smoke test
    failed first."""
    assert facts.device is not None
    if (
        facts.device.selftest is None
        and facts.device.smoke is not None
        and not facts.device.smoke.ok
    ):
        return skip("Not run: the smoke test failed first")
    command = f"{ctx.program} selftest --level standard -v{_where(facts, ctx)}"
    return _judge(facts.device.selftest, "self-test", command, ctx)


def _judge(run: DeviceRun | None, what: str, rerun: str, ctx: Context) -> Verdict:
    if run is None:
        return skip(f"The {what} was not run")
    if run.ok:
        return ok(run.summary)
    # The hint becomes the fix line: left in the details as well, it would be said twice.
    details = [line for line in run.details if line != run.hint]
    detail = "\n".join(details[:8]) + (f"\n… {len(details) - 8} more" if len(details) > 8 else "")
    fix = _install_first(ctx, run.hint) or _doctor_hint(run.hint) or rerun
    return fail(run.summary, fix=fix, detail=detail)
