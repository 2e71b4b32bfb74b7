"""``fleet report --redact``: the fleet judged on its real snapshots, shown fit to share.

Each host becomes ``host-N`` (the same host, the same number, in every group and in the list of
hosts without a verdict), its host name goes with it, and every text is redacted as
:mod:`neuron_env.redact` redacts a doctor report.
"""

from __future__ import annotations

import dataclasses

from neuron_env.checks.model import Finding
from neuron_env.fleet.model import FleetReport
from neuron_env.redact import Redactor, host_names, running_home, running_user


def redact_fleet(report: FleetReport) -> FleetReport:
    """A fleet report judged on the real snapshots, shown with each host as ``host-N`` (the
    same host, the same number, in every group) and its texts redacted."""
    names = [h.name for h in report.hosts] + [m.name for m in report.missing]
    aliases = {name: f"host-{number}" for number, name in enumerate(dict.fromkeys(names), 1)}
    literals = dict(aliases)
    for host in report.hosts:
        literals.update({n: aliases[host.name] for n in host_names(host.hostname)})
    redactor = Redactor(literals, [running_user()], running_home())

    def said(text: str) -> str:
        return redactor.text(text, version=True)

    def finding(f: Finding) -> Finding:
        return dataclasses.replace(
            f, summary=said(f.summary), detail=said(f.detail), fix=said(f.fix)
        )

    hosts = tuple(
        dataclasses.replace(h, name=aliases[h.name], hostname=aliases[h.name] if h.hostname
                            else None, problems=tuple(finding(f) for f in h.problems),
                            instance_type=said(h.instance_type) if h.instance_type else None,
                            release=said(h.release))
        for h in report.hosts
    )  # fmt: skip
    groups = tuple(
        dataclasses.replace(g, hosts=tuple(aliases.get(n, said(n)) for n in g.hosts),
                            fix=said(g.fix))
        for g in report.groups
    )  # fmt: skip
    missing = tuple(dataclasses.replace(m, name=aliases[m.name], reason=said(m.reason))
                    for m in report.missing)  # fmt: skip
    return dataclasses.replace(report, hosts=hosts, groups=groups, missing=missing)
