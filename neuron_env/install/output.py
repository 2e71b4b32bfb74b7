"""``install`` and ``download`` on the terminal: the plan, the progress, the outcome, text or JSON.

Layout only. :func:`terminal_display` is the :class:`~neuron_env.install.request.Display` the CLI
hands the operation (the plan on stdout, progress and failures on stderr, the yes/no question);
:data:`INSTALL` writes the :class:`~neuron_env.install.outcome.InstallOutcome` it returns (text, or
the command's JSON envelope).
"""

from __future__ import annotations

import contextlib
import io
import shlex
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from neuron_env.input_files import InputRejected, read_tail
from neuron_env.install.outcome import (
    Declined,
    Download,
    EnvironmentInstall,
    Export,
    InstallFailed,
    InstallOutcome,
    SystemInstall,
)
from neuron_env.invocation import command
from neuron_env.output.console import new_console
from neuron_env.output.emit import Format, Outcome, Output, by_exit_code, dumps
from neuron_env.output.emit import document as envelope_document
from neuron_env.output.formats import DocumentFormat

if TYPE_CHECKING:
    from neuron_env.install.outcome import InstallResult, SystemPlan
    from neuron_env.install.plan import IndexRoute, InstallPlan, PlannedPackage
    from neuron_env.install.request import Display
    from neuron_env.install.wheelhouse import ForeignTags, Wheelhouse
    from neuron_env.matrix import Note

MARKS = {"info": "[cyan]i[/]", "warning": "[yellow]![/]"}
TAIL_LINES = 15


# --- what the operation shows while it runs -----------------------------------------------------


def terminal_display(*, shown: bool, quiet: bool, confirm: Callable[[str], bool]) -> Display:
    """The terminal's part: ``shown`` (neither --json nor --quiet) shows the plan and progress;
    ``quiet`` silences the notices too; ``confirm`` asks, when stdin and stdout are a terminal."""
    from neuron_env.install.request import Display

    def progress(log: Path) -> contextlib.AbstractContextManager[Callable[[str], None]]:
        return progress_display(shown, log)

    return Display(
        plan=show_plan if shown else None,
        progress=progress,
        failed=show_failure,
        notice=_ignore if quiet else show_notice,
        confirm=confirm if sys.stdin.isatty() and sys.stdout.isatty() else None,
    )


def show_plan(outcome: InstallOutcome) -> None:
    """The plan of the outcome to come, on stdout."""
    out = new_console()
    if isinstance(outcome, EnvironmentInstall):
        print_plan(out, outcome.plan, outcome.backend)
    elif isinstance(outcome, Export | Download):
        heading = "Export" if isinstance(outcome, Export) else "Download"
        print_download_plan(out, outcome.plan, outcome.tags, heading=heading)
    elif isinstance(outcome, SystemInstall):
        print_system(out, outcome.plan, executing=outcome.running)


def show_notice(text: str) -> None:
    """What the user must see even with --json (on stderr): e.g. a killed install's leftovers."""
    new_console(stderr=True).print(f"[yellow]![/] {escape(text)}")


def show_failure(exc: InstallFailed) -> None:
    """On an install failure, the last lines of the backend's output, above the error."""
    lines = [line for line in exc.tail.splitlines() if line.strip()][-TAIL_LINES:]
    if lines:
        err = new_console(stderr=True)
        err.print(f"[dim]Last lines of {escape(str(exc.log))}:[/]")
        for line in lines:
            err.print(f"[dim]  {escape(line)}[/]")


@contextlib.contextmanager
def progress_display(enabled: bool, log: Path) -> Iterator[Callable[[str], None]]:
    """Phase lines, plus a spinner with the log's last line on a terminal."""
    if not enabled:
        yield _ignore
        return
    err = new_console(stderr=True)
    if not err.is_terminal:
        yield lambda phase: err.print(f"[dim]→[/] {escape(phase)}")
        return
    phase = ["Starting"]
    stop = threading.Event()
    with err.status(phase[0]) as status:

        def refresh() -> None:
            while not stop.wait(0.2):
                status.update(f"{escape(phase[0])}  [dim]{escape(_last_line(log))}[/]")

        def on_phase(text: str) -> None:
            err.print(f"[dim]→[/] {escape(text)}")
            phase[0] = text
            status.update(escape(text))

        thread = threading.Thread(target=refresh, daemon=True)
        thread.start()
        try:
            yield on_phase
        finally:
            stop.set()
            thread.join()


def _last_line(log: Path, width: int = 70) -> str:
    try:
        lines = read_tail(log, 2048).decode("utf-8", errors="replace").splitlines()
    except InputRejected:
        return ""
    text = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return text if len(text) <= width else text[: width - 1] + "…"


def _ignore(_: str) -> None:
    return None


# --- the outcome: text or JSON (emit) -----------------------------------------------------------

DRY_RUN = "[dim]Dry run: nothing was changed.[/]"


def print_outcome(out: Console, outcome: InstallOutcome, *, quiet: bool = False) -> None:
    """The outcome as text: what was done (nothing with ``quiet``, but an export to stdout)."""
    if isinstance(outcome, Declined):
        new_console(stderr=True).print("Nothing was changed.")
    elif isinstance(outcome, Export) and outcome.to_stdout:
        out.file.write(outcome.text)  # stdout holds the requirements file alone (a dry run: none)
    elif quiet:
        return
    elif isinstance(outcome, EnvironmentInstall | Export | Download) and outcome.dry_run:
        out.print(DRY_RUN)
    elif isinstance(outcome, EnvironmentInstall) and outcome.result is not None:
        print_result(out, outcome.plan, outcome.result)
    elif isinstance(outcome, Export) and outcome.wheelhouse is not None:
        print_export(out, outcome.file, outcome.wheelhouse)
    elif isinstance(outcome, Download) and outcome.wheelhouse is not None:
        print_wheelhouse(out, outcome.dest, outcome.wheelhouse)
    elif isinstance(outcome, SystemInstall) and outcome.executed:
        out.print(f"[green]✓[/] Neuron {escape(outcome.plan.release)} system packages installed.")


def document(outcome: InstallOutcome) -> tuple[str, dict[str, object]] | None:
    """The JSON envelope's command and payload (None: the outcome has no JSON document)."""
    if isinstance(outcome, EnvironmentInstall):
        result = outcome.result
        return "install", {"plan": outcome.plan, "dry_run": outcome.dry_run, "result": result}
    if isinstance(outcome, Export):
        if outcome.dry_run:
            return "install-export", {"plan": outcome.plan, "file": str(outcome.file)}
        house = outcome.wheelhouse
        payload: dict[str, object] = {
            "plan": outcome.plan,
            "file": str(outcome.file),
            "wheelhouse": house,
        }
        if outcome.to_stdout:  # --export - --json: the requirements file travels in the JSON
            payload["requirements"] = outcome.text
        return "install-export", payload
    if isinstance(outcome, Download):
        house = outcome.wheelhouse
        return "download", {"plan": outcome.plan, "dest": str(outcome.dest), "wheelhouse": house}
    if isinstance(outcome, SystemInstall):
        return "install-system", {"system": outcome.plan, "executed": outcome.executed}
    return None


def run_outcome(outcome: InstallOutcome) -> Outcome:
    """ok, or fail (exit 1) when the person at the terminal said no."""
    return by_exit_code(outcome.exit_code)


def render_json(outcome: InstallOutcome, **_: Any) -> str:
    """The command's versioned JSON envelope (``--export - --json``: the requirements file is
    its ``requirements`` field)."""
    if isinstance(outcome, Declined):
        declined = [("Nothing was changed: the plan was declined.", None)]
        return dumps(envelope_document("install", {}, run_outcome(outcome), errors=declined))
    found = document(outcome)
    if found is None:
        return outcome.text if isinstance(outcome, Export) else ""
    return dumps(envelope_document(*found, run_outcome(outcome)))


def _print_json(out: Console, outcome: InstallOutcome, **_: Any) -> None:
    if isinstance(outcome, Declined):
        new_console(stderr=True).print("Nothing was changed.")
    out.file.write(render_json(outcome))


def render_text(outcome: InstallOutcome, *, quiet: bool = False) -> str:
    buffer = io.StringIO()
    print_outcome(new_console(file=buffer), outcome, quiet=quiet)
    return buffer.getvalue()


INSTALL: Output[InstallOutcome, DocumentFormat] = Output(
    InstallOutcome,
    DocumentFormat,
    {
        DocumentFormat.text: Format(render_text, terminal=print_outcome),
        DocumentFormat.json: Format(render_json, terminal=_print_json),
    },
    run_outcome,
)


# --- the views ----------------------------------------------------------------------------------


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
    out.print(f"  log: {escape(result.log)}", soft_wrap=True)  # paths and commands: one line
    activate = shlex.join(["source", str(Path(result.venv) / "bin" / "activate")])
    out.print(f"  activate: {escape(activate)}", soft_wrap=True)
    python = str(Path(result.venv) / "bin" / "python")
    out.print("Next: judge it, then run the smoke test on the device:")
    out.print(f"  {escape(command('doctor', '--python', python))}", soft_wrap=True)
    out.print(f"  {escape(command('smoke', '--python', python))}", soft_wrap=True)


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
        # The same release as the steps shown: without it, --execute would install the default.
        run = command("install", "--system", "--release", plan.release, "--execute")
        out.print(f"Nothing was run. To run these steps: sudo {escape(run)}")
