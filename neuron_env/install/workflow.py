"""``install`` and ``download``: which mode runs, the plan, the yes, the work, one outcome.

:func:`install` checks the combination of options, then installs the apt steps (``--system``),
exports the pins (``--export``) or builds the Python environment; :func:`download` fills a
wheelhouse. Each shows its plan, asks before a change and reports progress through the request's
:class:`~neuron_env.install.request.Display` (the CLI's terminal; nothing by default), and returns
an :class:`~neuron_env.install.outcome.InstallOutcome` for the renderers of
:mod:`neuron_env.install.output`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.errors import BadInput, Interrupted
from neuron_env.home import home
from neuron_env.install.outcome import (
    Declined,
    Download,
    EnvironmentInstall,
    Export,
    InstallFailed,
    InstallOutcome,
    SystemInstall,
)
from neuron_env.install.request import Display, DownloadRequest, InstallRequest, Phase

if TYPE_CHECKING:
    from neuron_env.matrix import Matrix

__all__ = ["Display", "DownloadRequest", "InstallRequest", "download", "install", "log_path"]


def install(request: InstallRequest) -> InstallOutcome:
    """``neuron-env install``: system steps, an export, or a Python environment."""
    from neuron_env.matrix import load_matrix

    _check_combination(request)
    matrix = load_matrix(list(request.matrix_dirs))
    if request.system:
        return _system(matrix, request)
    if request.export is not None:
        with _interrupt_before_changes():
            return _export(matrix, request, request.export)
    return _environment(matrix, request)


def download(request: DownloadRequest) -> InstallOutcome:
    """``neuron-env download``: a routed wheelhouse for another machine."""
    from neuron_env.install.download import download as fill
    from neuron_env.install.prepare import prepare_download
    from neuron_env.install.user_packages import gather
    from neuron_env.matrix import load_matrix

    packages = gather(request.packages, request.requirements, request.pinned_torch())
    plan, tags = prepare_download(
        load_matrix(list(request.matrix_dirs)), request, packages,
        dest=request.dest.absolute(), python_version=request.python_version,
    )  # fmt: skip
    outcome = Download(plan, tags, request.dest, dry_run=request.dry_run)
    _show(request.display, outcome)
    if request.dry_run:
        return outcome
    log = log_path(request.log, "download")
    with _running(request.display, log) as progress:
        progress(f"Downloading into {request.dest}")
        house = fill(plan, request.dest, tags, log=log)
    return Download(plan, tags, request.dest, wheelhouse=house)


def _environment(matrix: Matrix, request: InstallRequest) -> InstallOutcome:
    from neuron_env.install.prepare import prepare
    from neuron_env.install.transaction import execute
    from neuron_env.install.user_packages import gather

    packages = gather(request.packages, request.requirements, request.pinned_torch())
    display = request.display
    with _interrupt_before_changes():
        prepared = prepare(matrix, request, packages)
        plan = prepared.plan
        outcome = EnvironmentInstall(plan, prepared.backend.describe(), dry_run=request.dry_run)
        _show(display, outcome)
        if request.dry_run:
            return outcome
        ask = not (request.yes or display.plan is None)  # a plan nobody saw is not asked about
        if ask and not _agreed(display, f"Install into {plan.venv}?"):
            return Declined()
    log = log_path(request.log, "install")
    with _running(display, log) as progress:
        result = execute(
            plan, prepared.target, prepared.backend, log=log, progress=progress,
            notice=display.notice,
        )  # fmt: skip
    return EnvironmentInstall(plan, outcome.backend, result=result)


def _export(matrix: Matrix, request: InstallRequest, file: Path) -> InstallOutcome:
    from neuron_env.install.download import export_requirements
    from neuron_env.install.prepare import prepare_download
    from neuron_env.install.user_packages import gather

    torch = request.pinned_torch()
    python = _export_python(matrix, request)
    packages = gather(request.packages, request.requirements, torch)
    plan, tags = prepare_download(matrix, request, packages, dest=file, python_version=python)
    outcome = Export(plan, tags, file, dry_run=request.dry_run)
    if not outcome.to_stdout:  # stdout holds the requirements file alone
        _show(request.display, outcome)
    if request.dry_run:
        return outcome
    if not outcome.to_stdout:
        _check_export_target(file)  # before the download, which takes a while
    log = log_path(request.log, "export")
    with _running(request.display, log, shown=not outcome.to_stdout) as progress:
        progress("Resolving and downloading to compute the hashes")
        text, house = export_requirements(plan, file, tags, log=log, wheelhouse=request.wheelhouse)
    if not outcome.to_stdout:
        _write_export(file, text)
    return Export(plan, tags, file, text=text, wheelhouse=house)


def _check_export_target(file: Path) -> None:
    """Refuse an --export path that cannot be a file: a missing folder, a directory."""
    if not file.parent.is_dir():
        raise BadInput(
            f"Cannot write the export to {file}: the folder {file.parent} does not exist. "
            "Nothing was downloaded.",
            hint="Create the folder first, or give another --export path ('-' for stdout).",
        )
    if file.is_dir():
        raise BadInput(f"Cannot write the export to {file}: it is a directory.")


def _write_export(file: Path, text: str) -> None:
    try:
        with file.open("w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:  # /dev/full, a full disk, a read-only file system
        raise BadInput(
            f"Cannot write the export to {file}: {exc.strerror}.",
            hint="Give another --export path ('-' for stdout).",
        ) from None


def _export_python(matrix: Matrix, request: InstallRequest) -> str | None:
    """The Python of the environment named by --venv/--python, if any (else the host's)."""
    if request.venv is None and request.python is None:
        return None
    from neuron_env.install.prepare import allowed_pythons
    from neuron_env.install.target_env import locate_target

    release, torch = matrix.get(request.release), request.pinned_torch()
    chosen = ("--torch", torch, "--release", str(release.version))
    target = locate_target(request.venv, request.python, allowed_pythons(release, torch), chosen)
    return target.python_minor


def _system(matrix: Matrix, request: InstallRequest) -> InstallOutcome:
    from neuron_env.install import system
    from neuron_env.probe.os_release import probe_os

    release = matrix.get(request.release)
    kernel = probe_os(request.sysroot).kernel or os.uname().release
    plan = system.apt_steps(release, system.read_host_release(request.sysroot, kernel), request.os)
    running = request.execute and not request.dry_run
    _show(request.display, SystemInstall(plan, running=running))
    if not running:
        return SystemInstall(plan)
    system.require_root(plan)
    system.check_runnable(plan)
    if not request.yes:
        if request.display.confirm is None:
            raise BadInput(
                "Not asking on a non-interactive terminal; nothing was run.",
                hint="Add --yes to run the steps without confirmation.",
            )
        if not _agreed(request.display, "Run these steps now?"):
            return Declined()
    log = log_path(request.log, "system")
    with _running(request.display, log) as progress:
        system.execute_steps(plan, log=log, sysroot=request.sysroot, progress=progress)
    return SystemInstall(plan, running=True, executed=True)


def _check_combination(request: InstallRequest) -> None:
    if request.execute and not request.system:
        raise BadInput("--execute runs the apt steps of --system; add --system.")
    python_only = {
        "--venv": request.venv, "--python": request.python, "--wheelhouse": request.wheelhouse,
        "--export": request.export, **request.mirrors.given(),
        "PACKAGE": request.packages or None, "--requirement": request.requirements or None,
    }  # fmt: skip
    used = [flag for flag, value in python_only.items() if value is not None]
    if request.system and used:
        raise BadInput(
            f"--system installs the apt packages only; it does not take {', '.join(used)}.",
            hint="Run the Python environment install as a separate command.",
        )


def _show(display: Display, outcome: InstallOutcome) -> None:
    if display.plan is not None:
        display.plan(outcome)


def _agreed(display: Display, question: str) -> bool:
    """The answer to ``question``; without a terminal to ask on, go ahead."""
    return display.confirm is None or display.confirm(question)


@contextlib.contextmanager
def _running(display: Display, log: Path, *, shown: bool = True) -> Iterator[Phase]:
    """The progress display while the backend runs; on a failed install, its log's last lines."""
    try:
        with display.progress(log) if shown else contextlib.nullcontext(_ignore) as progress:
            yield progress
    except InstallFailed as exc:
        display.failed(exc)
        raise


def _ignore(_: str) -> None:
    return None


@contextlib.contextmanager
def _interrupt_before_changes() -> Iterator[None]:
    """Ctrl-C or SIGTERM while planning, asking or exporting: exit 130 and say nothing changed.

    The install transaction reports its own interrupts (before or after its commit point).
    """
    from neuron_env.signals import sigterm_as_interrupt

    try:
        with sigterm_as_interrupt():
            yield
    except KeyboardInterrupt:
        raise Interrupted(
            "Interrupted before anything was changed.", hint="Run the same command again."
        ) from None


def log_path(explicit: Path | None, kind: str) -> Path:
    """Where the backend's output goes: ``--log``, else the user's state directory."""
    if explicit is not None:
        explicit.parent.mkdir(parents=True, exist_ok=True)
        return explicit
    folder = home()
    state = os.environ.get("XDG_STATE_HOME") or (folder and folder / ".local" / "state")
    directory = Path(tempfile.gettempdir())  # no home folder, or one that cannot be written
    if state:
        logs = Path(state) / "neuron-env" / "logs"
        with contextlib.suppress(OSError):
            logs.mkdir(parents=True, exist_ok=True)
            directory = logs
    return directory / f"{kind}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
