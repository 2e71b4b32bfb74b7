"""Device checks: judge what the smoke test and the self-test suite measured."""

from __future__ import annotations

from neuron_env.checks.model import Context, Verdict, fail, ok, skip
from neuron_env.facts import DeviceRun, HostFacts


def check_smoke(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.device is not None
    return _judge(facts.device.smoke, "smoke", f"neuron-env smoke --device {facts.device.device}")


def check_selftest(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.device is not None
    if (
        facts.device.selftest is None
        and facts.device.smoke is not None
        and not facts.device.smoke.ok
    ):
        return skip("Not run: the smoke test failed first")
    command = f"neuron-env selftest --level standard --device {facts.device.device}"
    return _judge(facts.device.selftest, "self-test", command)


def _judge(run: DeviceRun | None, what: str, rerun: str) -> Verdict:
    if run is None:
        return skip(f"The {what} was not run")
    if run.ok:
        return ok(run.summary)
    detail = "\n".join(run.details[:8]) + (
        f"\n… {len(run.details) - 8} more" if len(run.details) > 8 else ""
    )
    return fail(run.summary, fix=run.hint or f"See the cases: {rerun} -v", detail=detail)
