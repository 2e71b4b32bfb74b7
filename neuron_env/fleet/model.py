"""The fleet report's data: per-host verdicts, groups of hosts sharing a problem, missing hosts."""

from __future__ import annotations

from neuron_env.checks.model import Finding
from neuron_env.frozen import frozen

NOT_COLLECTED = "_not-collected.json"


@frozen
class HostVerdict:
    name: str
    hostname: str | None
    instance_type: str | None
    release: str
    status: str
    problems: tuple[Finding, ...]


@frozen
class Group:
    """Hosts that share one failing (or warning) check, and what to run on them."""

    check: str
    status: str
    hosts: tuple[str, ...]
    fix: str
    other_fixes: int


@frozen
class Missing:
    """A host with no verdict: its snapshot was unreadable, or collection did not reach it."""

    name: str
    reason: str


@frozen
class FleetReport:
    hosts: tuple[HostVerdict, ...]
    groups: tuple[Group, ...]
    missing: tuple[Missing, ...]
    release: str | None
    counts: dict[str, int]
    releases: dict[str, int]

    @property
    def exit_code(self) -> int:
        return 1 if self.counts.get("fail") or self.missing else 0
