"""What ``install`` and ``download`` do between parsing options and the library.

Checks option combinations, builds the plan, shows it, asks for confirmation, shows progress
while the backend runs (its output goes to a log file; the tail is shown on failure) and prints
the result as text or JSON.
"""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.markup import escape

from neuron_env.cli._common import console, load_matrix, print_json
from neuron_env.errors import EXIT_FAILED, BadInput, Interrupted
from neuron_env.matrix import Matrix

if TYPE_CHECKING:
    from neuron_env.install.user_packages import UserRequirement

TAIL_LINES = 15


@dataclass(frozen=True)
class InstallOptions:
    torch: str | None
    release: str | None
    venv: Path | None
    python: Path | None
    backend: str
    index_url: str | None
    neuron_index: str | None
    pytorch_index: str | None
    wheelhouse: Path | None
    offline: bool
    os: str | None
    export: Path | None
    system: bool
    execute: bool
    dry_run: bool
    yes: bool
    json: bool
    quiet: bool
    log: Path | None
    sysroot: Path
    packages: tuple[str, ...] = ()
    requirements: tuple[Path, ...] = ()


@dataclass(frozen=True)
class DownloadOptions:
    torch: str | None
    dest: Path
    release: str | None
    python_version: str | None
    os: str | None
    index_url: str | None
    neuron_index: str | None
    pytorch_index: str | None
    dry_run: bool
    json: bool
    quiet: bool
    log: Path | None
    sysroot: Path
    packages: tuple[str, ...] = ()
    requirements: tuple[Path, ...] = ()


def _user_packages(
    packages: tuple[str, ...], files: tuple[Path, ...]
) -> tuple[UserRequirement, ...]:
    """The user's requirements, read and checked for syntax (exit 2 naming FILE:LINE)."""
    from neuron_env.install.user_packages import gather

    return gather(packages, files)


def run_install(ctx: typer.Context, o: InstallOptions) -> None:
    """``neuron-env install``: system steps, an export, or a Python environment."""
    _check_install_options(o)
    matrix = load_matrix(ctx)
    if o.system:
        _run_system(matrix, o)
        return
    if o.export is not None:
        with _interrupt_before_changes():
            _run_export(matrix, o)
    else:
        _run_environment(matrix, o)


@contextlib.contextmanager
def _interrupt_before_changes() -> Iterator[None]:
    """Ctrl-C or SIGTERM while planning, asking or exporting: exit 130 and say nothing changed.

    The install transaction reports its own interrupts (before or after its commit point).
    """
    from neuron_env.install.staging import sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():
            yield
    except KeyboardInterrupt:
        raise Interrupted(
            "Interrupted before anything was changed.", hint="Run the same command again."
        ) from None


def _run_environment(matrix: Matrix, o: InstallOptions) -> None:
    from neuron_env.cli import install_views as views
    from neuron_env.install.prepare import InstallRequest, prepare
    from neuron_env.install.transaction import execute

    request = InstallRequest(
        torch=_require_torch(o.torch), release=o.release, venv=o.venv, python=o.python,
        backend=o.backend, os=o.os, index_url=o.index_url, neuron_index=o.neuron_index,
        pytorch_index=o.pytorch_index, wheelhouse=o.wheelhouse, offline=o.offline,
        sysroot=o.sysroot, packages=_user_packages(o.packages, o.requirements),
    )  # fmt: skip
    with _interrupt_before_changes():
        prepared = prepare(matrix, request)
        plan = prepared.plan
        if not (o.quiet or o.json):
            views.print_plan(console(), plan, prepared.backend.describe())
        if o.dry_run:
            _finish_dry_run(
                o.json, "install", {"plan": plan, "dry_run": True, "result": None}, quiet=o.quiet
            )
            return
        _confirm(o.yes or o.json or o.quiet, f"Install into {plan.venv}?")
    log = log_path(o.log, "install")
    with _failure_tail(), progress_display(not (o.quiet or o.json), log) as progress:
        result = execute(
            plan, prepared.target, prepared.backend, log=log, progress=progress,
            notice=_notice(o.quiet),
        )  # fmt: skip
    if o.json:
        print_json("install", {"plan": plan, "dry_run": False, "result": result})
    elif not o.quiet:
        views.print_result(console(), plan, result)


def _notice(quiet: bool) -> Callable[[str], None]:
    """Lines the user must see even with --json (on stderr): e.g. a killed install's leftovers."""
    if quiet:
        return lambda _: None
    return lambda text: console(stderr=True).print(f"[yellow]![/] {escape(text)}")


def _run_export(matrix: Matrix, o: InstallOptions) -> None:
    from neuron_env.cli import install_views as views
    from neuron_env.install.download import export_requirements
    from neuron_env.install.prepare import DownloadRequest, prepare_download

    assert o.export is not None
    request = DownloadRequest(
        torch=_require_torch(o.torch), dest=o.export, release=o.release,
        python_version=_export_python(matrix, o), os=o.os, index_url=o.index_url,
        neuron_index=o.neuron_index, pytorch_index=o.pytorch_index, sysroot=o.sysroot,
        packages=_user_packages(o.packages, o.requirements),
    )  # fmt: skip
    plan, tags = prepare_download(matrix, request)
    to_stdout = str(o.export) == "-"
    if not (o.quiet or o.json or to_stdout):
        views.print_download_plan(console(), plan, tags, heading="Export")
    if o.dry_run:
        payload = {"plan": plan, "file": str(o.export)}
        _finish_dry_run(o.json, "install-export", payload, quiet=o.quiet or to_stdout)
        return
    log = log_path(o.log, "export")
    show = not (o.quiet or o.json or to_stdout)
    with _failure_tail(), progress_display(show, log) as progress:
        progress("Resolving and downloading to compute the hashes")
        text, house = export_requirements(plan, o.export, tags, log=log, wheelhouse=o.wheelhouse)
    if to_stdout:
        sys.stdout.write(text)
        return
    o.export.write_text(text, encoding="utf-8")
    if o.json:
        print_json("install-export", {"plan": plan, "file": str(o.export), "wheelhouse": house})
    elif not o.quiet:
        views.print_export(console(), o.export, house)


def _export_python(matrix: Matrix, o: InstallOptions) -> str | None:
    """The Python of the environment named by --venv/--python, if any (else the host's)."""
    if o.venv is None and o.python is None:
        return None
    from neuron_env.install.prepare import allowed_pythons
    from neuron_env.install.target_env import locate_target

    allowed = allowed_pythons(matrix.get(o.release), _require_torch(o.torch))
    return locate_target(o.venv, o.python, allowed).python_minor


def _run_system(matrix: Matrix, o: InstallOptions) -> None:
    from neuron_env.cli import install_views as views
    from neuron_env.install import system
    from neuron_env.probe.os_release import probe_os

    release = matrix.get(o.release)
    kernel = probe_os(o.sysroot).kernel or os.uname().release
    plan = system.apt_steps(release, system.read_host_release(o.sysroot, kernel), o.os)
    if not o.quiet and not o.json:
        views.print_system(console(), plan, executing=o.execute and not o.dry_run)
    if not o.execute or o.dry_run:
        if o.json:
            print_json("install-system", {"system": plan, "executed": False})
        return
    system.require_root()
    system.check_runnable(plan)
    _confirm(o.yes, "Run these steps now?", required=True)
    log = log_path(o.log, "system")
    with _failure_tail(), progress_display(not (o.quiet or o.json), log) as progress:
        system.execute_steps(plan, log=log, sysroot=o.sysroot, progress=progress)
    if o.json:
        print_json("install-system", {"system": plan, "executed": True})
    elif not o.quiet:
        console().print(f"[green]✓[/] Neuron {escape(plan.release)} system packages installed.")


def run_download(ctx: typer.Context, o: DownloadOptions) -> None:
    """``neuron-env download``: a routed wheelhouse for another machine."""
    from neuron_env.cli import install_views as views
    from neuron_env.install.download import download
    from neuron_env.install.prepare import DownloadRequest, prepare_download

    request = DownloadRequest(
        torch=_require_torch(o.torch), dest=o.dest.absolute(), release=o.release,
        python_version=o.python_version, os=o.os, index_url=o.index_url,
        neuron_index=o.neuron_index, pytorch_index=o.pytorch_index, sysroot=o.sysroot,
        packages=_user_packages(o.packages, o.requirements),
    )  # fmt: skip
    plan, tags = prepare_download(load_matrix(ctx), request)
    if not (o.quiet or o.json):
        views.print_download_plan(console(), plan, tags, heading="Download")
    if o.dry_run:
        payload = {"plan": plan, "dest": str(o.dest), "wheelhouse": None}
        _finish_dry_run(o.json, "download", payload, quiet=o.quiet)
        return
    log = log_path(o.log, "download")
    with _failure_tail(), progress_display(not (o.quiet or o.json), log) as progress:
        progress(f"Downloading into {o.dest}")
        house = download(plan, o.dest, tags, log=log)
    if o.json:
        print_json("download", {"plan": plan, "dest": str(o.dest), "wheelhouse": house})
    elif not o.quiet:
        views.print_wheelhouse(console(), o.dest, house)


# --- shared pieces ------------------------------------------------------------------------------


def _check_install_options(o: InstallOptions) -> None:
    if o.execute and not o.system:
        raise BadInput("--execute runs the apt steps of --system; add --system.")
    python_only = {
        "--venv": o.venv, "--python": o.python, "--wheelhouse": o.wheelhouse,
        "--export": o.export, "--index-url": o.index_url, "--neuron-index": o.neuron_index,
        "--pytorch-index": o.pytorch_index, "PACKAGE": o.packages or None,
        "--requirement": o.requirements or None,
    }  # fmt: skip
    used = [flag for flag, value in python_only.items() if value is not None]
    if o.system and used:
        raise BadInput(
            f"--system installs the apt packages only; it does not take {', '.join(used)}.",
            hint="Run the Python environment install as a separate command.",
        )


def _require_torch(torch: str | None) -> str:
    if torch is None:
        raise BadInput(
            "Which PyTorch? Give --torch X.Y, e.g. --torch 2.14.",
            hint="'neuron-env matrix list' shows the pairings of each release.",
        )
    return torch


def _finish_dry_run(
    as_json: bool, command: str, payload: dict[str, object], *, quiet: bool = False
) -> None:
    if as_json:
        print_json(command, payload)
    elif not quiet:
        console().print("[dim]Dry run: nothing was changed.[/]")


def _confirm(skip: bool, question: str, *, required: bool = False) -> None:
    """Ask on a terminal; without one, go ahead (or refuse, when the change needs a yes)."""
    if skip:
        return
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        if required:
            raise BadInput(
                "Not asking on a non-interactive terminal; nothing was run.",
                hint="Add --yes to run the steps without confirmation.",
            )
        return
    if not typer.confirm(question, default=False):
        console(stderr=True).print("Nothing was changed.")
        raise typer.Exit(EXIT_FAILED)


def log_path(explicit: Path | None, kind: str) -> Path:
    """Where the backend's output goes: ``--log``, else the user's state directory."""
    if explicit is not None:
        explicit.parent.mkdir(parents=True, exist_ok=True)
        return explicit
    state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    directory = Path(state) / "neuron-env" / "logs"
    try:
        directory.mkdir(parents=True, exist_ok=True)
    except OSError:
        directory = Path(tempfile.gettempdir())
    return directory / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"


@contextlib.contextmanager
def _failure_tail() -> Iterator[None]:
    """On an install failure, show the last lines of the backend's output above the error."""
    from neuron_env.install.outcome import InstallFailed

    try:
        yield
    except InstallFailed as exc:
        lines = [line for line in exc.tail.splitlines() if line.strip()][-TAIL_LINES:]
        if lines:
            err = console(stderr=True)
            err.print(f"[dim]Last lines of {escape(str(exc.log))}:[/]")
            for line in lines:
                err.print(f"[dim]  {escape(line)}[/]")
        raise


@contextlib.contextmanager
def progress_display(enabled: bool, log: Path) -> Iterator[Callable[[str], None]]:
    """Phase lines, plus a spinner with the log's last line on a terminal."""
    if not enabled:
        yield lambda _: None
        return
    err = console(stderr=True)
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
        with log.open("rb") as handle:
            handle.seek(max(0, log.stat().st_size - 2048))
            lines = handle.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    text = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return text if len(text) <= width else text[: width - 1] + "…"
