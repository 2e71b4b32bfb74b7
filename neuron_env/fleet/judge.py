"""Judge a directory of facts snapshots offline and summarise the fleet.

Snapshots may come from ``neuron-env fleet collect`` (one ``<instance-id>.json`` each, plus
``_not-collected.json``), ``srun neuron-env facts``, a Kubernetes DaemonSet's logs, or anything else
that saved ``neuron-env facts`` output. Each host gets the doctor's checks; hosts are grouped by
failing check id with the fix for each group.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from neuron_env.doctor.diagnose import check_request, judge
from neuron_env.doctor.request import DoctorOptions
from neuron_env.errors import BadInput, MalformedFile
from neuron_env.facts import read_snapshot
from neuron_env.fleet.model import NOT_COLLECTED, FleetReport, Group, HostVerdict, Missing
from neuron_env.input_files import SNAPSHOT_LIMITS, InputRejected, load_json
from neuron_env.invocation import command
from neuron_env.matrix import Matrix


def report_fleet(
    matrix: Matrix, folder: Path, *, release: str | None = None, torch: str | None = None
) -> FleetReport:
    """Judge every snapshot in ``folder`` against ``release`` (default: each host's own)."""
    if folder.is_file():  # one host's snapshot: doctor judges it; the fleet is its folder
        raise BadInput(
            f"{folder} is a file: fleet report judges a folder of facts snapshots.",
            hint=f"Judge this one host with '{command('doctor', '--facts', str(folder))}', "
            f"or every snapshot beside it with '{command('fleet', 'report', str(folder.parent))}'.",
        )
    if not folder.is_dir():
        raise BadInput(f"{folder} is not a directory of facts snapshots.")
    check_request(matrix, release, torch)  # bad input once, not 1,000 identical errors
    options = DoctorOptions(release=release, torch=torch)
    hosts, missing = [], list(not_collected(folder))
    files = snapshot_files(folder)
    if not files and not missing:
        raise BadInput(
            f"{folder} holds no facts snapshots (*.json): there is no host to judge.",
            hint=_collect_hint(folder),
        )
    for path in files:
        try:
            hosts.append(_judge_host(matrix, path, options))
        except MalformedFile as exc:
            missing.append(Missing(path.stem, f"unreadable snapshot: {exc.message}"))
        except BadInput as exc:  # e.g. --torch 2.13 for a host whose release pairs only 2.14
            missing.append(Missing(path.stem, f"cannot be judged as asked: {exc.message}"))
        except Exception as exc:  # one host's odd snapshot never sinks the whole fleet
            missing.append(Missing(path.stem, f"snapshot could not be judged: {_crash(exc, path)}"))
    return FleetReport(
        hosts=tuple(hosts),
        groups=tuple(group_problems(hosts)),
        missing=tuple(missing),
        release=release,
        counts=dict(Counter(h.status for h in hosts)),
        releases=dict(Counter(h.release for h in hosts)),
    )


def snapshot_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("*.json") if not p.name.startswith("_"))


def _judge_host(matrix: Matrix, path: Path, options: DoctorOptions) -> HostVerdict:
    facts = read_snapshot(path)
    report = judge(matrix, facts, options)
    # A host that could not be judged is counted with the failing ones, as before exit 3 existed.
    status = "fail" if report.summary.status in ("fail", "unknown") else report.summary.status
    problems = tuple(f for f in report.findings if f.status in ("fail", "error", "warn"))
    return HostVerdict(
        name=path.stem,
        hostname=facts.hostname,
        instance_type=facts.ec2.instance_type if facts.ec2 else None,
        release=report.release,
        status=status,
        problems=problems,
    )


def group_problems(hosts: Iterable[HostVerdict]) -> Iterator[Group]:
    """One group per (check, status), biggest first; the most common fix stands for the group."""
    members: dict[tuple[str, str], list[tuple[str, str]]] = {}
    for host in hosts:
        for finding in host.problems:
            kind = "fail" if finding.status == "error" else str(finding.status)
            members.setdefault((finding.check, kind), []).append((host.name, finding.fix))
    order = sorted(members.items(), key=lambda item: (item[0][1] != "fail", -len(item[1]), item[0]))
    for (check, kind), entries in order:
        fixes = Counter(fix for _, fix in entries)
        fix, _ = fixes.most_common(1)[0]
        yield Group(check, kind, tuple(name for name, _ in entries), fix, len(fixes) - 1)


def not_collected(folder: Path) -> Iterator[Missing]:
    """Hosts ``fleet collect`` recorded as not answering, not managed, or without neuron-env."""
    path = folder / NOT_COLLECTED
    if not path.exists():
        return
    try:
        records: Sequence[dict[str, Any]] = load_json(path, SNAPSHOT_LIMITS)["hosts"]
        yield from (Missing(str(r["instance"]), str(r["reason"])) for r in records)
    except InputRejected as exc:
        yield Missing(NOT_COLLECTED, f"unreadable record of hosts not collected: {exc.problem}")
    except (ValueError, KeyError, TypeError) as exc:
        yield Missing(NOT_COLLECTED, f"unreadable record of hosts not collected: {exc!r}")


def _collect_hint(folder: Path) -> str:
    """``fleet collect`` into this very folder; a host's own ``facts`` runs on that host, where
    neuron-env's path is not ours to know (so it is advice, not a command to paste here)."""
    collect = command("fleet", "collect", "-o", str(folder.absolute()))
    return (
        f"Collect them with '{collect}' and the instances' --targets or --instance-ids, or "
        f"save each host's own snapshot (its facts command, -o HOST.json) into {folder}."
    )


def _crash(exc: Exception, path: Path) -> str:
    again = command("doctor", "--facts", str(path.absolute()), "--debug")
    return f"{type(exc).__name__}: {exc} (a neuron-env bug; run '{again}' and report it)"
