"""``neuron-env facts --format text`` and ``--redact``: a snapshot made fit to share.

The release is judged on the real facts (a redacted value could change the verdict); what is
shown is redacted when asked (see :mod:`neuron_env.redact`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neuron_env.doctor.facts_markdown import JudgedRelease, render_markdown
from neuron_env.errors import NeuronEnvError
from neuron_env.facts import HostFacts


def judged_release(matrix_dirs: Sequence[Path], facts: HostFacts) -> JudgedRelease:
    """The release doctor would judge ``facts`` against (no flags), or why there is none."""
    from neuron_env.checks.context import build_context
    from neuron_env.matrix import load_matrix

    try:
        ctx = build_context(load_matrix(list(matrix_dirs)), facts)
    except NeuronEnvError as exc:  # a report about a broken setup is still worth pasting
        return JudgedRelease(None, f"could not judge: {exc.message}")
    torch = str(ctx.pairing.torch) if ctx.pairing else None
    return JudgedRelease(str(ctx.release.version), ctx.release_reason, torch)


def markdown_report(matrix_dirs: Sequence[Path], facts: HostFacts, *, redact: bool) -> str:
    """The Markdown bug report for ``facts``, redacted when asked."""
    from neuron_env.redact import redact_facts, redactor_for

    judged = judged_release(matrix_dirs, facts)
    if not redact:
        return render_markdown(facts, judged, redacted=False)
    reason = redactor_for(facts).text(judged.reason, version=True)
    judged = JudgedRelease(judged.release, reason, judged.torch)
    return render_markdown(redact_facts(facts), judged, redacted=True)
