"""Text and JSON views of matrix data for the ``matrix`` commands (layout only, no decisions)."""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from neuron_env.errors import NeuronEnvError
from neuron_env.escape import terminal
from neuron_env.matrix import Change, Matrix, Release, Target
from neuron_env.matrix.commands.workflow import (
    ReleaseDiff,
    ReleaseList,
    ReleaseShown,
    ResolvedTarget,
    Validation,
)
from neuron_env.matrix.model import InstanceType, OsRelease
from neuron_env.output.console import new_console
from neuron_env.output.emit import (
    DONE,
    Error,
    Format,
    Outcome,
    Output,
    by_exit_code,
    document,
    dumps,
)
from neuron_env.output.formats import DocumentFormat
from neuron_env.resources import shipped_matrix_dir
from neuron_env.wording import plural

R = TypeVar("R")
MARKS = {"info": "[cyan]i[/]", "warning": "[yellow]![/]"}


def _flag(text: object, confirmed: bool = True) -> Text:
    """Data as plain text (never markup, never a control code), marked when unconfirmed."""
    out = Text(terminal(str(text)))
    if not confirmed:
        out.append(" (unconfirmed)", style="yellow")
    return out


def _table(title: str, *columns: str) -> Table:
    table = Table(
        title=title, title_justify="left", title_style="bold", show_edge=False, pad_edge=False
    )
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _origin(release: Release) -> str:
    shipped = shipped_matrix_dir().resolve()
    return (
        "shipped" if release.origin.resolve().parent == shipped else terminal(str(release.origin))
    )


# --- list ---------------------------------------------------------------------------------------


def release_summaries(matrix: Matrix) -> list[dict[str, Any]]:
    latest = matrix.latest().version
    return [
        {
            "version": str(r.version),
            "date": r.release.date.isoformat(),
            "status": r.release.status,
            "latest": r.version == latest,
            "pairings": [
                {
                    "torch": str(p.torch),
                    "torch_neuronx": str(p.torch_neuronx),
                    "python": list(p.python),
                }
                for p in r.pairings
            ],
            "wheels_for": [os_id for os_id, entry in r.os.items() if entry.wheels],
            "origin": str(r.origin),
        }
        for r in matrix.releases
    ]


def print_release_list(out: Console, matrix: Matrix) -> None:
    columns = ["Release", "Date", "Status", "PyTorch ↔ torch-neuronx", "Python", "pip wheels for"]
    with_origin = any(_origin(r) != "shipped" for r in matrix.releases)
    table = _table("Neuron releases", *columns, *(["From"] if with_origin else []))
    latest = matrix.latest().version
    for r in matrix.releases:
        pairs = Text("\n").join(
            _flag(f"{p.torch_minor} ↔ {p.torch_neuronx}.*", p.confirmed) for p in r.pairings
        )
        pythons = sorted(
            {py for p in r.pairings for py in p.python}, key=lambda v: int(v.split(".")[1])
        )
        wheels = ", ".join(os_id for os_id, e in r.os.items() if e.wheels) or "none"
        name = f"{r.version} [green](latest)[/]" if r.version == latest else str(r.version)
        status = r.release.status.replace("-", " ")
        row: list[str | Text] = [name, r.release.date.isoformat(), status, pairs]
        row += [", ".join(pythons), wheels]
        table.add_row(*row, *([escape(_origin(r))] if with_origin else []))
    out.print(table)
    for r in matrix.releases:
        if r.known_issues:
            out.print(Text(f"\nNeuron {r.version}: ") + Text(terminal(known_issues_line(r))))
    from neuron_env.invocation import command

    details = command("matrix", "show", "--release", str(latest))  # runs as pasted
    out.print(f"\nDetails of one release: {escape(details)}", soft_wrap=True)


# --- show ---------------------------------------------------------------------------------------


def print_release(out: Console, r: Release, *, with_sources: bool = False) -> None:
    info = r.release
    out.print(
        f"[bold]Neuron {r.version}[/] · {info.date.isoformat()} · "
        f"{info.status.replace('-', ' ')} · {', '.join(info.arch)}"
    )
    out.print(escape(info.summary))
    for note in info.notes:
        out.print(f"  • {escape(note)}")
    if info.min_glibc:
        out.print(f"  • PyTorch needs glibc ≥ {info.min_glibc}.")
    out.print()
    for table in (
        _pairings(r),
        _packages(r),
        _companions(r),
        _indexes(r),
        _os_table(r),
        _instances(r),
        _families(r),
        _system_packages(r),
        _placeholders(r),
        _dlamis(r),
        _limitations(r),
        _known_issues(r),
        _links("Documentation", r.docs),
    ):
        out.print(table)
        out.print()
    legacy = r.legacy_xla
    out.print(
        f"[bold]Legacy XLA line[/]: torch-neuronx {legacy.versions} "
        f"(last build {legacy.last}). {escape(legacy.note)}"
    )
    if with_sources:
        out.print()
        out.print(_links("Sources", r.sources))


def _pairings(r: Release) -> Table:
    table = _table("PyTorch pairings", "torch", "torch-neuronx family", "Python", "Pins")
    for p in r.pairings:
        table.add_row(
            str(p.torch),
            _flag(p.torch_neuronx, p.confirmed),
            ", ".join(p.python),
            f"torch{p.torch_spec} torch-neuronx{p.torch_neuronx_spec}",
        )
    return table


def _packages(r: Release) -> Table:
    table = _table("Python packages", "Package", "Pin", "Index", "Note")
    for name, pkg in r.packages.items():
        table.add_row(
            name,
            _flag(pkg.requirement_spec, pkg.confirmed),
            r.index_for(name) or "default",
            _flag(pkg.note),
        )
    return table


def _companions(r: Release) -> Table:
    table = _table(
        "Companions (installed only on request, each only from its index)",
        "Package", "Pin", "PyTorch", "Instance families", "Index", "Note",
    )  # fmt: skip
    for name, c in r.companions.items():
        shown = name if not c.import_name else f"{name}\n[dim]import {escape(c.import_name)}[/]"
        table.add_row(
            f"{shown}\n[dim]{escape(c.name)}[/]",
            _flag(c.requirement_spec, c.confirmed),
            ", ".join(c.torch),
            _flag(", ".join(c.families), c.families_confirmed),
            c.index,
            _flag(c.note),
        )
    if not r.companions:
        table.caption = "none listed for this release"
    return table


def _indexes(r: Release) -> Table:
    table = _table("Package indexes (each package only from its index)", "Index", "URL", "Serves")
    for name, ix in r.indexes.items():
        table.add_row(name, _flag(ix.url), ", ".join(ix.serves))
    table.add_row("default", "pip/uv default (or --index-url)", "everything else")
    return table


def _os_table(r: Release) -> Table:
    table = _table(
        "Operating systems", "OS", "Support", "pip wheels", "What the sources say", "Instead"
    )
    for os_id, entry in r.os.items():
        table.add_row(
            f"{os_id}\n[dim]{escape(entry.name)}[/]",
            _flag(entry.support.replace("-", " "), entry.confirmed),
            "yes" if entry.wheels else "no",
            _claims(entry),
            _flag(entry.instead),
        )
    return table


def _claims(entry: OsRelease) -> Text:
    lines = []
    for claim in entry.claims:
        said = [claim.support.replace("-", " ")] if claim.support else []
        if claim.wheels is not None:
            said.append("wheels" if claim.wheels else "no wheels")
        lines.append(Text.assemble((f"{claim.source}: ", "dim"), ", ".join(said) or claim.note))
    return Text("\n").join(lines)


def _instances(r: Release) -> Table:
    table = _table(
        "Instance types",
        "Type",
        "Chips",
        "Logical cores",
        "Device memory",
        "vCPU / RAM",
        "EFA / network cards",
        "Markets",
    )
    for name, it in r.instance_types.items():
        chip = r.chips.get(r.families[it.family].chip or "")

        def fact(text: str, *keys: str, it: InstanceType = it) -> Text:
            return _flag(text, all(it.is_confirmed(key) for key in keys))

        table.add_row(
            _flag(name, it.confirmed),
            fact(f"{it.chips} × {chip.name}" if chip else f"{it.chips} (XLA line only)", "chips"),
            fact(f"{it.chips * chip.logical_cores()} (LNC={chip.default_lnc})", "chips")
            if chip
            else "—",
            fact(f"{it.chips * chip.memory_gib} GiB", "chips") if chip else "—",
            fact(f"{it.vcpus} / {it.memory_gib} GiB", "vcpus", "memory-gib"),
            fact(f"{it.max_efa} / {it.network_cards}", "max-efa", "network-cards"),
            fact(", ".join(it.usage_classes), "usage-classes"),
        )
    return table


def _families(r: Release) -> Table:
    table = _table("Instance families", "Family", "Native backend", "Chip", "Why / note")
    for name, fam in r.families.items():
        chip = r.chips[fam.chip].name if fam.chip else "—"
        table.add_row(
            name,
            "[green]yes[/]" if fam.native else "[red]no[/]",
            chip,
            _flag(fam.reason or fam.note),
        )
    return table


def _system_packages(r: Release) -> Table:
    table = _table("System packages (apt)", "Package", "Role", "Version", "Note")
    for name, pkg in r.system_packages.items():
        version = str(pkg.version) if pkg.version else "—"
        role = pkg.role if pkg.required else f"{pkg.role} (optional)"
        table.add_row(name, role, _flag(version, pkg.confirmed), _flag(pkg.note))
    table.caption = escape(f"apt repository {r.apt.url}, key {r.apt.key_url}")
    return table


def _placeholders(r: Release) -> Table:
    table = _table(
        "'WRONG PACKAGE' placeholders on the default index", "Package", "Versions", "Note"
    )
    for name, ph in r.placeholders.items():
        table.add_row(name, _flag(", ".join(map(str, ph.versions)), ph.confirmed), _flag(ph.note))
    return table


def _dlamis(r: Release) -> Table:
    table = _table("Deep Learning AMIs", "AMI", "OS", "SSM parameter", "venv")
    for d in r.dlamis:
        table.add_row(
            _flag(d.name, d.confirmed),
            d.os,
            _flag(d.ssm_parameter, d.ssm_confirmed),
            _flag(d.venv or "—"),
        )
    return table


def _limitations(r: Release) -> Table:
    table = _table("Known limitations", "Id", "Kind", "Summary")
    for lim in r.limitations:
        text = f"{lim.summary} Since then: {lim.note}" if lim.note else lim.summary
        table.add_row(lim.id, lim.kind, _flag(text, lim.confirmed))
    return table


def known_issues_line(r: Release) -> str:
    """One sentence: the release's known issues, grouped by what fixes them."""
    fixes: dict[tuple[str, str, str], list[str]] = {}
    for issue in r.known_issues:
        key = (issue.package, str(issue.fixed_in), ", ".join(map(str, issue.fixed_by)))
        fixes.setdefault(key, []).append(issue.summary)
    parts = [
        f"{plural(len(names), 'known issue')} in {package} ({', '.join(names)}), fixed in "
        f"Neuron {fixed_in} ({package} {fixed_by})"
        for (package, fixed_in, fixed_by), names in fixes.items()
    ]
    return "; ".join(parts) + "."


def _known_issues(r: Release) -> Table:
    table = _table("Known issues", "Id", "Affects", "Fixed in", "Summary", "Source")
    for issue in r.known_issues:
        affects = f"{issue.package} {', '.join(f'{v}.*' for v in issue.affects)}"
        fixed = f"Neuron {issue.fixed_in}: {', '.join(map(str, issue.fixed_by))}"
        text = f"{issue.summary}. {issue.note}" if issue.note else issue.summary
        sources = ", ".join(r.sources.get(s, s) for s in issue.sources)
        table.add_row(issue.id, affects, fixed, _flag(text, issue.confirmed), _flag(sources))
    return table


def _links(title: str, links: dict[str, str]) -> Table:
    table = _table(title, "Name", "URL")
    for name, url in links.items():
        table.add_row(name, _flag(url))
    return table


# --- resolve ------------------------------------------------------------------------------------


def print_target(out: Console, t: Target) -> None:
    facets = [f"Neuron {t.release} ({t.release_status.replace('-', ' ')})", f"PyTorch {t.torch}"]
    facets += [v for v in (t.python and f"Python {t.python}", t.os, t.arch, t.instance_type) if v]
    out.print(Text(" · ".join(facets), style="bold"))
    table = _table("", "Package", "Pin", "Index", "URL")
    for pin in t.pins:
        table.add_row(
            pin.name,
            _flag(pin.spec, pin.confirmed),
            pin.index or "default",
            _flag(pin.index_url or ""),
        )
    out.print(table)
    _print_companions(out, t)
    system = [
        f"{s.name}={s.version}" if s.version else f"{s.name} (version unconfirmed)"
        for s in t.system_packages
        if s.required
    ]
    out.print(f"\n[bold]System packages[/]: {escape(', '.join(system))}")
    if t.notes:
        out.print()
    for note in t.notes:
        out.print(f"{MARKS[note.level]} {escape(note.message)}")


def _print_companions(out: Console, t: Target) -> None:
    if not t.companions:
        return
    table = _table("Companions (only on request)", "Package", "Pin", "Index", "Instance families")
    for c in t.companions:
        table.add_row(
            c.name,
            _flag(c.spec, c.confirmed),
            c.index,
            _flag(", ".join(c.families), c.families_confirmed),
        )
    out.print()
    out.print(table)


# --- diff ---------------------------------------------------------------------------------------


def print_diff(out: Console, old: str, new: str, changes: Sequence[Change]) -> None:
    if not changes:
        out.print(f"Neuron {old} and {new} describe the same facts.")
        return
    out.print(f"[bold]Neuron {old} → {new}[/]: {len(changes)} changes")
    section = None
    for change in changes:
        if change.section != section:
            section = change.section
            out.print(f"\n[bold]{section}[/]")
        out.print(_change_line(change))


def _change_line(change: Change) -> Text:
    key = change.key.split(".", 1)[1] if "." in change.key else change.key
    if change.kind == "added":
        return Text.assemble(("  + ", "green"), key, ": ", change.after or "")
    if change.kind == "removed":
        return Text.assemble(("  - ", "red"), key, ": ", change.before or "")
    return Text.assemble(
        ("  ~ ", "yellow"), key, ": ", (change.before or "", "dim"), " → ", change.after or ""
    )


# --- validate -----------------------------------------------------------------------------------


def validation_results(results: Iterable[tuple[Path, object]]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    for path, outcome in results:
        if isinstance(outcome, Release):
            rows.append({"file": str(path), "valid": True, "release": str(outcome.version)})
        elif isinstance(outcome, NeuronEnvError):
            rows.append(
                {
                    "file": str(path),
                    "valid": False,
                    "error": outcome.message,
                    "key": getattr(outcome, "key", ""),
                }
            )
    return rows


def print_validation(out: Console, results: Iterable[tuple[Path, object]]) -> None:
    for path, outcome in results:
        if isinstance(outcome, Release):
            counts = [
                plural(len(outcome.pairings), "pairing"),
                plural(len(outcome.os), "OS release"),
                plural(len(outcome.instance_types), "instance type"),
            ]
            shown = escape(terminal(str(path)))
            out.print(f"[green]✓[/] {shown}: Neuron {outcome.version}, {', '.join(counts)}")
        elif isinstance(outcome, NeuronEnvError):
            out.print(f"[red]✗[/] {escape(terminal(outcome.message))}")


# --- formats (emit) -----------------------------------------------------------------------------


def _output(
    result: type[R],
    command: str,
    payload: Callable[[R], dict[str, Any]],
    show: Callable[..., None],
    outcome: Callable[[R], Outcome] = lambda _: DONE,
    errors: Callable[[R], list[Error]] = lambda _: [],
) -> Output[R, DocumentFormat]:
    """text (``show`` on a console) and json (the ``command`` envelope of ``payload``)."""

    def as_text(result: Any, **options: Any) -> str:
        buffer = io.StringIO()
        show(new_console(file=buffer), result, **options)
        return buffer.getvalue()

    def as_json(result: Any, **options: Any) -> str:
        return dumps(document(command, payload(result), outcome(result), errors=errors(result)))

    table: dict[DocumentFormat, Format[R]] = {
        DocumentFormat.text: Format(as_text, terminal=show),
        DocumentFormat.json: Format(as_json),
    }
    return Output(result, DocumentFormat, table, outcome)


def _diff_payload(d: ReleaseDiff) -> dict[str, Any]:
    rows = [
        {"key": c.key, "path": c.path, "kind": c.kind, "before": c.before, "after": c.after}
        for c in d.changes
    ]
    return {"old": d.old, "new": d.new, "changes": rows}


LIST = _output(
    ReleaseList,
    "matrix-list",
    lambda listed: {"releases": release_summaries(listed.matrix)},
    lambda out, listed: print_release_list(out, listed.matrix),
)
SHOW = _output(
    ReleaseShown,
    "matrix-show",
    lambda shown: {"release": shown.release},
    lambda out, shown, sources=False: print_release(out, shown.release, with_sources=sources),
)
RESOLVE = _output(
    ResolvedTarget,
    "matrix-resolve",
    lambda resolved: {"request": resolved.request, "target": resolved.target},
    lambda out, resolved: print_target(out, resolved.target),
)
DIFF = _output(
    ReleaseDiff,
    "matrix-diff",
    _diff_payload,
    lambda out, d: print_diff(out, str(d.before.version), str(d.after.version), d.changes),
)
VALIDATE = _output(
    Validation,
    "matrix-validate",
    lambda checked: {"files": validation_results(checked.results)},
    lambda out, checked: print_validation(out, checked.results),
    outcome=lambda checked: by_exit_code(checked.exit_code),
    errors=lambda checked: [
        (failure.message, failure.hint)
        for _, failure in checked.results
        if isinstance(failure, NeuronEnvError)
    ],
)
