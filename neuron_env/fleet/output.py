"""The fleet report as text, JSON, JUnit (a testcase per host), GitHub Markdown/annotations and
an HTML page (:mod:`neuron_env.fleet.html_report`)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from neuron_env.doctor.github import ICONS
from neuron_env.doctor.text import Line, print_hanging
from neuron_env.escape import (
    github_data,
    github_property,
    markdown_cell,
    markdown_code,
    terminal,
)
from neuron_env.fleet.collect import CollectResult
from neuron_env.fleet.model import FleetReport, Group, HostVerdict
from neuron_env.output.console import RichWriter, Span, new_console
from neuron_env.output.emit import Format, Outcome, Output, by_exit_code, document, dumps, passed
from neuron_env.output.formats import DocumentFormat, FleetFormat
from neuron_env.output.junit_xml import Case, Suite, write_junit
from neuron_env.wording import plural

COMMAND = "fleet-report"
SHOWN_HOSTS = 5
CLASSNAME = "neuron-env.fleet"


def outcome(report: FleetReport) -> Outcome:
    """ok when every host is ready, else fail (exit 1)."""
    return by_exit_code(report.exit_code)


def _text(report: FleetReport, *, verbose: bool = False) -> str:
    buffer = io.StringIO()
    print_fleet(new_console(file=buffer), report, verbose=verbose)
    return buffer.getvalue()


def _json(report: FleetReport, **_: Any) -> str:
    return dumps(to_document(report))


def _junit(report: FleetReport, **_: Any) -> str:
    return render_junit(report)


def _github(report: FleetReport, **_: Any) -> str:
    return "".join(line + "\n" for line in workflow_commands(report)) + render_markdown(report)


def _html(report: FleetReport, **_: Any) -> str:
    from neuron_env.fleet.html_report import render  # it words the headline with this module

    return render(report)


def _print_text(out: Console, report: FleetReport, *, verbose: bool = False) -> None:
    print_fleet(out, report, verbose=verbose)


# The fleet report's formats: github writes annotations and Markdown to one stream.
FLEET: Output[FleetReport, FleetFormat] = Output(
    FleetReport,
    FleetFormat,
    {
        FleetFormat.text: Format(_text, terminal=_print_text),
        FleetFormat.json: Format(_json),
        FleetFormat.junit: Format(_junit),
        FleetFormat.github: Format(_github),
        FleetFormat.html: Format(_html),
    },
    outcome,
)


def to_document(report: FleetReport) -> dict[str, object]:
    """The fleet report as the versioned ``fleet-report`` JSON envelope."""
    return document(
        COMMAND,
        {
            "release": report.release,
            "counts": report.counts,
            "releases": report.releases,
            "groups": report.groups,
            "missing": report.missing,
            "hosts": [_host_document(h) for h in report.hosts],
        },
        outcome(report),
    )


def _host_document(host: HostVerdict) -> dict[str, object]:
    return {
        "name": host.name,
        "hostname": host.hostname,
        "instance_type": host.instance_type,
        "release": host.release,
        "status": host.status,
        "problems": [
            {"check": f.check, "status": f.status, "summary": f.summary, "fix": f.fix}
            for f in host.problems
        ],
    }


# --- text ---------------------------------------------------------------------------------------


def print_fleet(out: Console, report: FleetReport, *, verbose: bool = False) -> None:
    """The fleet report as text on ``out``: the headline, the groups of hosts by failing (then
    warning) check with their fix, the hosts without a verdict; ``verbose`` lists every host."""
    total = len(report.hosts) + len(report.missing)
    out.print(f"[bold]neuron-env fleet report[/] · {plural(total, 'host')} · {against(report)}")
    out.print(_headline(report))
    failing = [g for g in report.groups if g.status == "fail"]
    warning = [g for g in report.groups if g.status == "warn"]
    marks: tuple[tuple[str, list[Group], Span], ...] = (
        ("Not ready", failing, ("✗", "red")),
        ("Warnings", warning, ("!", "yellow")),
    )
    for title, groups, mark in marks:
        if groups:
            out.print(f"\n[bold]{title}[/] (hosts grouped by check)")
            for group in groups:
                _print_group(out, group, mark, verbose)
    if report.missing:
        out.print(f"\n[bold]No verdict[/] ({plural(len(report.missing), 'host')})")
        for missing in report.missing[: None if verbose else 20]:
            out.print(f"  [red]?[/] {shown(missing.name)}: {shown(missing.reason)}")
        if not verbose and len(report.missing) > 20:
            out.print(f"  … and {len(report.missing) - 20} more (-v lists all)")


def against(report: FleetReport) -> str:
    """What each host was judged against: the release asked for, else each host's own."""
    if report.release:
        return f"judged against Neuron {report.release}"
    detected = ", ".join(f"{r}: {n}" for r, n in sorted(report.releases.items()))
    return f"each host judged against the newest release that fits it ({detected or 'none'})"


def _headline(report: FleetReport) -> str:
    colour = "green" if report.exit_code == 0 else "red"
    verdict, rest = headline(report).split(": ", 1)
    return f"[{colour}]{verdict}[/]: {rest}"


def headline(report: FleetReport) -> str:
    """The fleet's verdict and its counts, one sentence of plain text (no markup)."""
    ok, warn, fail = (report.counts.get(s, 0) for s in ("ok", "warn", "fail"))
    ready = ok + warn
    verdict = "Fleet ready" if report.exit_code == 0 else "Fleet not ready"
    target = f" for Neuron {report.release}" if report.release else ""
    parts = [f"{ready} ready{target} ({ok} ok, {warn} with warnings)", f"{fail} not ready"]
    if report.missing:
        parts.append(f"{len(report.missing)} without a verdict")
    return f"{verdict}: " + ", ".join(parts) + "."


def _print_group(out: Console, group: Group, mark: Span, verbose: bool) -> None:
    names = [terminal(name) for name in group.hosts]  # a file name's newline stays visible
    hosts = f"{plural(len(group.hosts), 'host')}: {_host_list(names, verbose)}"
    lines: list[Line] = [("", "", hosts)]
    if group.fix:
        others = f" (+{group.other_fixes} variants; --format json has each host's)"
        lines.append(("fix: ", "", group.fix + (others if group.other_fixes else "")))
    lead = [("  ", ""), mark, (f" {group.check} — ", "")]
    print_hanging(RichWriter(out), lead, lines, 6)


def shown(value: str) -> str:
    """A value from a snapshot or a file name, for rich markup: inert, and never markup itself."""
    return escape(terminal(value))


def _host_list(hosts: Sequence[str], verbose: bool) -> str:
    if verbose or len(hosts) <= SHOWN_HOSTS:
        return ", ".join(hosts)
    return ", ".join(hosts[:SHOWN_HOSTS]) + f" and {len(hosts) - SHOWN_HOSTS} more"


# --- JUnit: one testcase per host -----------------------------------------------------------------


def render_junit(report: FleetReport) -> str:
    """The fleet report as JUnit XML: one testsuite, a testcase per host (not collected: error)."""
    cases = [_host_case(host) for host in report.hosts]
    cases += [
        Case(CLASSNAME, missing.name, "error", missing.reason, "not-collected")
        for missing in report.missing
    ]
    return write_junit("neuron-env fleet", [Suite(CLASSNAME, cases)])


def _host_case(host: HostVerdict) -> Case:
    failing = [f for f in host.problems if f.status in ("fail", "error")]
    if not failing:
        return Case(CLASSNAME, host.name)
    message = ", ".join(f.check for f in failing)
    text = "\n".join(f"{f.check}: {f.summary}\nfix: {f.fix}" for f in failing)
    return Case(CLASSNAME, host.name, "failure", message, "fail", text)


# --- GitHub -------------------------------------------------------------------------------------


def render_markdown(report: FleetReport) -> str:
    """The fleet report as GitHub Markdown (a step summary): headline, then a table of groups."""
    plain = headline(report)
    lines = [
        f"### neuron-env fleet report: {plural(len(report.hosts) + len(report.missing), 'host')}",
        "",
        plain,
        "",
    ]
    if report.groups:
        lines += ["| | check | hosts | fix |", "|---|---|---|---|"]
        for group in report.groups:
            hosts = markdown_cell(_host_list(group.hosts, verbose=False))
            check, fix = markdown_code(group.check), markdown_code(group.fix)
            lines.append(
                f"| {ICONS[group.status]} | {check} | {len(group.hosts)}: {hosts} | {fix} |"
            )
    return "\n".join(lines) + "\n"


def workflow_commands(report: FleetReport) -> list[str]:
    """GitHub Actions ``::error``/``::warning`` lines, one per group, their values escaped."""
    lines = []
    for group in report.groups:
        level = "error" if group.status == "fail" else "warning"
        hosts = f"{plural(len(group.hosts), 'host')}: {_host_list(group.hosts, False)}"
        message = f"{hosts}\nfix: {group.fix}"
        title = github_property(f"neuron-env {group.check}")
        lines.append(f"::{level} title={title}::{github_data(message)}")
    if report.missing:
        names = _host_list([m.name for m in report.missing], False)
        lines.append(f"::error title=neuron-env fleet::{github_data(f'No verdict for {names}')}")
    return lines


# --- fleet collect --------------------------------------------------------------------------


def collect_payload(result: CollectResult, output: Path) -> dict[str, object]:
    """The ``fleet-collect`` JSON payload: what arrived, what was there, who did not answer."""
    return {"directory": str(output), "collected": result.collected,
            "skipped": result.skipped, "missing": result.missing}  # fmt: skip


def print_collect(out: Console, result: CollectResult, output: Path) -> None:
    """What ``fleet collect`` did, as text: counts, the hosts without a snapshot (their stderr
    shown inertly) and the command that judges the folder, quoted for a shell."""
    from neuron_env.escape import shell

    out.print(
        f"Collected {len(result.collected)} snapshots into {shown(str(output))}"
        f" ({len(result.skipped)} already there; --refresh asks them again)."
    )
    for missing in result.missing:
        out.print(f"  [red]?[/] {shown(missing.name)}: {shown(missing.reason)}")
    if result.missing:
        out.print(f"{len(result.missing)} without a snapshot (recorded in _not-collected.json).")
    from neuron_env.invocation import program

    # Named so that it runs as pasted into a fresh shell (neuron-env may live in a venv's bin).
    out.print(f"Next: {shown(program())} fleet report {shown(shell(str(output)))}", soft_wrap=True)


def _collect_outcome(result: CollectResult) -> Outcome:
    """ok when every instance answered, else fail (exit 1; what arrived is kept)."""
    return passed(not result.missing)


def _collect_json(result: CollectResult, *, directory: Path) -> str:
    data = collect_payload(result, directory)
    return dumps(document("fleet-collect", data, _collect_outcome(result)))


def _collect_text(result: CollectResult, *, directory: Path) -> str:
    buffer = io.StringIO()
    print_collect(new_console(file=buffer), result, directory)
    return buffer.getvalue()


def _print_collected(out: Console, result: CollectResult, *, directory: Path) -> None:
    print_collect(out, result, directory)


# ``fleet collect``: the renderers take the snapshots' ``directory`` as an option.
COLLECT: Output[CollectResult, DocumentFormat] = Output(
    CollectResult,
    DocumentFormat,
    {
        DocumentFormat.text: Format(_collect_text, terminal=_print_collected),
        DocumentFormat.json: Format(_collect_json),
    },
    _collect_outcome,
)
