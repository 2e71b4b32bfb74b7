"""Text views of install plans, results, wheelhouses and system steps (layout only)."""

from __future__ import annotations

import shlex
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from neuron_env.install.outcome import InstallResult, SystemPlan
from neuron_env.install.plan import IndexRoute, InstallPlan, PlannedPackage
from neuron_env.install.wheelhouse import ForeignTags, Wheelhouse
from neuron_env.matrix import Note

MARKS = {"info": "[cyan]i[/]", "warning": "[yellow]![/]"}


def _table(*columns: str) -> Table:
    table = Table(show_edge=False, pad_edge=False, box=None, header_style="bold")
    for column in columns:
        table.add_column(column, overflow="fold")
    return table


def _heading(plan: InstallPlan) -> str:
    status = plan.release_status.replace("-", " ")
    parts = [
        f"Neuron {plan.release} ({status})",
        f"PyTorch {plan.torch}",
        f"Python {plan.python}",
        *(p for p in (plan.os, plan.arch) if p),
    ]
    return " · ".join(parts)


def _source(route: IndexRoute) -> Text:
    if route.url is None:
        return Text(f"from {route.origin}", style="dim")
    text = Text(route.url)
    if route.origin != "matrix":
        text.append(f"  [{route.origin}]", style="dim")
    return text


def _shown_spec(package: PlannedPackage) -> str:
    """The pin; a user package without a version says 'any' (the resolver picks, pins hold)."""
    return package.spec or ("any" if package.requested else "")


def _pin(spec: str, confirmed: bool) -> Text:
    text = Text(spec)
    if not confirmed:
        text.append(" (unconfirmed)", style="yellow")
    return text


def _notes(out: Console, notes: tuple[Note, ...]) -> None:
    if notes:
        out.print()
    for note in notes:
        out.print(f"{MARKS[note.level]} {escape(note.message)}")


def print_plan(out: Console, plan: InstallPlan, backend: str) -> None:
    """The plan: what, into which environment, every pin and the index it comes from."""
    out.print(f"[bold]Install plan[/] — {escape(_heading(plan))}")
    verb = "Create" if plan.action == "create" else "Upgrade"
    out.print(f"{verb} [bold]{escape(plan.venv)}[/] with {escape(backend)}")
    if plan.action == "create":
        out.print(f"  from the interpreter {escape(plan.base_python)}")
    out.print()
    table = _table("Package", "Pin", "Now", "From", "URL")
    for package in plan.packages:
        route = plan.route(package.route)
        table.add_row(
            Text(package.name),
            _pin(_shown_spec(package), package.confirmed),
            Text(package.installed or "—"),
            Text(route.name),
            _source(route),
        )
    if plan.wheelhouse is None:
        default = plan.default_route
        table.add_row(Text("everything else"), "", "", Text(default.name), _source(default))
    out.print(table)
    if plan.remove:
        out.print(f"[bold]Remove[/] (legacy PyTorch/XLA): {escape(', '.join(plan.remove))}")
    _notes(out, plan.notes)


def print_result(out: Console, plan: InstallPlan, result: InstallResult) -> None:
    """What is installed now, what was verified, and how to use it."""
    verb = "Created" if result.action == "create" else "Upgraded"
    out.print()
    out.print(
        f"[green]✓[/] {verb} [bold]{escape(result.venv)}[/] with {escape(result.backend)} "
        f"in {result.duration_s:.1f} s"
    )
    versions = " · ".join(f"{name} {version}" for name, version in result.versions.items())
    out.print(f"  {escape(versions)}")
    if plan.remove:
        out.print(f"  removed (legacy PyTorch/XLA): {escape(', '.join(plan.remove))}")
    out.print(
        "  verified: versions match the pins · no placeholder · no legacy XLA build · "
        f"import torch → {escape(result.torch_import)}"
    )
    out.print(f"  log: {escape(result.log)}")
    activate = shlex.join(["source", str(Path(result.venv) / "bin" / "activate")])
    out.print(f"  activate: {escape(activate)}")


def print_download_plan(
    out: Console, plan: InstallPlan, tags: ForeignTags, *, heading: str
) -> None:
    """The wheels a download or export will fetch, and from where."""
    out.print(f"[bold]{escape(heading)} plan[/] — {escape(_heading(plan))}")
    newest = tags.platforms[0] if tags.platforms else "this interpreter's tags"
    out.print(f"For Python {escape(tags.python)} on {escape(newest)} (and older manylinux tags)")
    out.print()
    table = _table("Package", "Pin", "From", "URL")
    for package in plan.packages:
        route = plan.route(package.route)
        table.add_row(
            Text(package.name),
            _pin(_shown_spec(package), package.confirmed),
            Text(route.name),
            _source(route),
        )
    default = plan.default_route
    table.add_row(Text("dependencies"), "", Text(default.name), _source(default))
    out.print(table)
    _notes(out, tuple(n for n in plan.notes if n.level == "warning"))


def print_wheelhouse(out: Console, dest: Path, house: Wheelhouse) -> None:
    out.print()
    out.print(f"[green]✓[/] {len(house.files)} wheels in [bold]{escape(str(dest))}[/]")
    for wheel in sorted(house.files, key=lambda w: w.name):
        out.print(f"  {escape(wheel.name)} {escape(wheel.version)}  [dim]{escape(wheel.route)}[/]")
    command = [
        "neuron-env", "install", "--torch", ".".join(house.torch.split(".")[:2]),
        "--release", house.release,
        "--wheelhouse", str(dest), "--offline", "--venv", "DIR",
    ]  # fmt: skip
    out.print(f"Install on the other machine with: {escape(shlex.join(command))}")


def print_export(out: Console, path: Path, house: Wheelhouse) -> None:
    out.print()
    out.print(
        f"[green]✓[/] Wrote [bold]{escape(str(path))}[/]: {len(house.files)} packages, each "
        "pinned by version and sha256"
    )


def print_system(out: Console, plan: SystemPlan, *, executing: bool) -> None:
    """The apt steps, numbered, as quoted shell lines."""
    out.print(
        f"[bold]System packages[/] — Neuron {escape(plan.release)} on {escape(plan.os)} "
        f"({escape(plan.codename)}), kernel {escape(plan.kernel)}"
    )
    out.print("[dim]Run as root (or prefix each line with sudo):[/]")
    for number, step in enumerate(plan.steps, 1):
        out.print(f"[dim]# {number}. {escape(step.summary)}[/]")
        out.print(Text(step.display), soft_wrap=True)
    _notes(out, plan.notes)
    if not executing:
        out.print()
        out.print("Nothing was run. To run these steps: sudo neuron-env install --system --execute")
