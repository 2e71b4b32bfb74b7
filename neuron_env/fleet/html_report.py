"""The fleet report as one self-contained HTML page (:mod:`neuron_env.output.html_page`): the
verdict, a section per failing (then warning) check naming every host it holds and the fix to run
on them, the hosts without a verdict, then every host's row. Layout only."""

from __future__ import annotations

from neuron_env.fleet.model import FleetReport, Group, HostVerdict
from neuron_env.fleet.output import against, headline
from neuron_env.output.html_page import (
    bullets,
    esc,
    page,
    section,
    status,
    table,
    verdict,
)
from neuron_env.wording import plural

TITLES = {"fail": "Not ready", "warn": "Warning"}


def render(report: FleetReport) -> str:
    """The whole page."""
    total = len(report.hosts) + len(report.missing)
    parts = [verdict(report.exit_code == 0, headline(report)), _sentence(against(report))]
    for kind in ("fail", "warn"):
        parts += [_group(g) for g in report.groups if g.status == kind]
    if report.missing:
        missing = bullets(f"{m.name}: {m.reason}" for m in report.missing)
        parts.append(section(f"No verdict ({plural(len(report.missing), 'host')})", missing))
    if report.hosts:
        parts.append(section("Every host", _hosts(report.hosts)))
    return page(f"neuron-env fleet report: {plural(total, 'host')}", *parts)


def _sentence(text: str) -> str:
    return f"<p>{esc(text[:1].upper() + text[1:])}.</p>"


def _group(group: Group) -> str:
    """A check and every host that fails it (no "and 12 more": a page has room for all)."""
    hosts = f"<p>{esc(plural(len(group.hosts), 'host'))}:</p>" + bullets(group.hosts)
    fix = f"<p>Fix:</p><pre><code>{esc(group.fix)}</code></pre>" if group.fix else ""
    if group.other_fixes:
        variants = f"+{group.other_fixes} variants; --format json has each host's."
        fix += f'<p class="muted">{esc(variants)}</p>'
    title = f"{TITLES.get(group.status, group.status)}: {group.check}"
    return section(title, hosts + fix, f"group {group.status}")


def _hosts(hosts: tuple[HostVerdict, ...]) -> str:
    rows = [
        (h.name, h.hostname or "—", h.instance_type or "—", h.release, status(h.status),
         ", ".join(f.check for f in h.problems) or "—")
        for h in hosts
    ]  # fmt: skip
    return table(("Host", "Hostname", "Instance type", "Release", "Status", "Problems"), rows)
