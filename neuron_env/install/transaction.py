"""The install transaction: build beside the target, verify, swap; on any failure, change nothing.

Steps, under a lock for the target:

1. a staging directory beside the target (same filesystem);
2. the new environment in it: a copy of the existing one (an upgrade keeps everything else the
   environment holds) or a fresh venv;
3. the backend installs the plan into it;
4. verification (:mod:`neuron_env.install.verify`) against the plan;
5. a check that nobody changed the live environment meanwhile (:mod:`neuron_env.install.live`);
6. relocation of the staging path to the target path, the atomic swap, a check that the
   environment's interpreter runs at its final path (else the swap is undone);
7. the old environment (now in the staging directory) and the staging directory are removed.

The swap is the commit point. Any exception before it, Ctrl-C and SIGTERM included, removes the
staging directory and leaves the target exactly as it was. Ctrl-C and SIGTERM during the swap and
the cleanup are held until they are done: the install then has happened, and the message says so.
A killed install (SIGKILL) leaves a staging directory that the next install removes, saying so.
"""

from __future__ import annotations

import contextlib
import errno
import shlex
import shutil
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from neuron_env.command import clean_env, run
from neuron_env.errors import CommandFailed, Interrupted, NeuronEnvError, OperationFailed
from neuron_env.install import live, staging
from neuron_env.install.backends import Backend, Session
from neuron_env.install.outcome import InstallFailed, InstallResult
from neuron_env.install.plan import InstallPlan
from neuron_env.install.reachability import backend_failure
from neuron_env.install.target_env import TargetEnv
from neuron_env.install.verify import Problem, TorchImport, import_torch, problems
from neuron_env.invocation import command
from neuron_env.probe.python_env import probe_python
from neuron_env.signals import future_result, held_interrupts, sigterm_as_interrupt

Progress = Callable[[str], None]


class Phases:
    """Announces each phase through ``progress`` and records how long each one took."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.timings: dict[str, float] = {}
        self._current: tuple[str, float] | None = None

    def start(self, key: str, message: str) -> None:
        self.stop()
        self.progress(message)
        self._current = (key, time.monotonic())

    def stop(self) -> None:
        if self._current is not None:
            key, began = self._current
            self.timings[key] = round(time.monotonic() - began, 3)
            self._current = None


class VerificationFailed(InstallFailed):
    """The new environment was built but does not match the plan; it was discarded."""

    def __init__(self, found: list[Problem], *, unchanged: str, log: Path) -> None:
        super().__init__(
            f"The new environment does not match the plan, so it was discarded: "
            f"{' '.join(p.message for p in found)} {unchanged}",
            hint=_verification_hint(found),
            log=log,
        )
        self.problems = found


def _verification_hint(found: list[Problem]) -> str:
    if any(p.code == "unrouted" for p in found):
        return (
            "Pin that package in a matrix file (--matrix-dir) with the index it must come from, "
            "or check the Neuron index (--neuron-index)."
        )
    return "Check the indexes (--neuron-index, --pytorch-index, --index-url) and retry."


def execute(
    plan: InstallPlan,
    target: TargetEnv,
    backend: Backend,
    *,
    log: Path,
    progress: Progress = lambda _: None,
    notice: Progress | None = None,
) -> InstallResult:
    """Carry out ``plan`` for ``target`` as one transaction (see the module docstring).

    ``notice`` gets what the user must know even when the install succeeds (a leftover of a
    killed install that was cleaned up); it defaults to ``progress``.
    """
    started = time.monotonic()
    phases = Phases(progress)
    tell = notice or progress
    with (
        staging.locked(target.path),
        sigterm_as_interrupt(),
        contextlib.ExitStack() as committed,
    ):
        box: Path | None = None
        try:
            for line in staging.recover_stale(target.path):
                tell(line)
            before = live.snapshot(target.path) if target.exists else None
            box = staging.make_staging_dir(target.path)
            versions, torch = _build(plan, target, backend, box, log, phases)
            _check_live_unchanged(target, before, log)
            phases.start("swap", "Swapping the verified environment into place")
            # From here to the end of the cleanup, Ctrl-C and SIGTERM wait (the commit point).
            held = committed.enter_context(held_interrupts())
            _swap_in(box / "venv", target)
        except BaseException as exc:
            if box is not None:
                with held_interrupts():
                    staging.remove_tree(box)
            raise _failure(exc, plan, target, log) from None
        phases.start("cleanup", "Removing the previous environment and the staging directory")
        staging.remove_tree(box)
        phases.stop()
        if box.exists():
            tell(f"Could not remove {box}; remove it with: rm -rf {shlex.quote(str(box))}")
    if held:
        raise Interrupted(_completed_anyway(plan, target, versions), hint=_completed_hint(target))
    return InstallResult(
        venv=str(target.path),
        action=plan.action,
        backend=backend.name,
        versions={p.name: versions[p.name] for p in plan.packages},
        previous={p.name: p.installed for p in plan.packages if p.installed},
        torch_import=torch.version or "",
        duration_s=round(time.monotonic() - started, 2),
        timings=phases.timings,
        log=str(log),
    )


def _completed_anyway(plan: InstallPlan, target: TargetEnv, versions: dict[str, str]) -> str:
    pins = ", ".join(f"{p.name} {versions.get(p.name, '?')}" for p in plan.packages)
    done = "upgraded" if target.exists else "created"
    previous = " The previous environment was removed." if target.exists else ""
    return (
        f"Interrupted after the swap, so the install is complete: {target.path} was {done} "
        f"({pins}).{previous}"
    )


def _completed_hint(target: TargetEnv) -> str:
    return f"Nothing to redo; check it with: {command('doctor', '--python', str(target.python))}"


def _check_live_unchanged(target: TargetEnv, before: live.Snapshot | None, log: Path) -> None:
    """Refuse to swap when someone changed the live environment while the copy was built."""
    if before is None:
        return
    changed = live.changes(before, live.snapshot(target.path))
    if changed:
        raise InstallFailed(
            f"{target.path} changed while the new environment was being built "
            f"({'; '.join(changed)}): swapping it in would lose that change, so the new "
            f"environment was discarded. {_unchanged(target)}",
            hint="Run the same command again when nothing else is installing into it; it "
            "starts from the environment as it is then.",
            log=log,
        )


def _build(
    plan: InstallPlan,
    target: TargetEnv,
    backend: Backend,
    box: Path,
    log: Path,
    phases: Phases,
) -> tuple[dict[str, str], TorchImport]:
    venv = box / "venv"
    # The backend's own temporary folders go into the staging box, removed with it whatever happens:
    # a backend killed by a signal cannot clean up after itself.
    session = Session(log=log, work=box / "work", extra_env={"TMPDIR": str(box / "work")})
    session.work.mkdir()
    if target.exists:
        phases.start("copy", f"Copying {target.path} to a staging directory beside it")
        staging.copy_venv(target.path, venv)
    else:
        phases.start("create", f"Creating a staging venv with Python {target.python_version}")
        backend.create_venv(target.base_python, venv, session)
    if plan.remove:
        phases.start("remove", f"Removing the legacy PyTorch/XLA stack: {', '.join(plan.remove)}")
        backend.uninstall(plan.remove, venv / "bin" / "python", session)
    phases.start("install", f"Installing with {backend.name}")
    from_neuron = backend.install(plan, venv / "bin" / "python", session)
    phases.start("verify", "Verifying the new environment (import torch)")
    versions, torch = _inspect(venv / "bin" / "python")
    found = problems(plan, target.installed(), versions, torch, routed=from_neuron)
    if found:
        raise VerificationFailed(found, unchanged=_unchanged(target), log=log)
    staging.remove_tree(session.work)
    staging.relocate(venv, venv, target.path)
    return versions, torch


def _inspect(python: Path) -> tuple[dict[str, str], TorchImport]:
    """The installed versions and ``import torch``, read side by side (the import is slow)."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        torch = pool.submit(import_torch, python)
        facts = probe_python(python)
        versions = {name: dist.version for name, dist in facts.distributions.items()}
        return versions, future_result(torch)


def _swap_in(new: Path, target: TargetEnv) -> None:
    """Put ``new`` at the target path; undo the swap if its interpreter does not run there.

    The caller holds Ctrl-C and SIGTERM meanwhile, so that the swap is never left halfway.
    """
    if target.path.exists():
        staging.exchange(new, target.path)
    else:
        new.rename(target.path)
    try:
        _check_runs(target.path)
    except BaseException:
        _undo_swap(new, target)
        raise


def _undo_swap(new: Path, target: TargetEnv) -> None:
    if new.exists():
        staging.exchange(new, target.path)
    else:
        target.path.rename(new)


def _check_runs(venv: Path) -> None:
    code = "import sys; print(sys.prefix)"
    result = run([venv / "bin" / "python", "-I", "-c", code], timeout=60, env=clean_env())
    if Path(result.stdout.strip()) != venv:
        raise OperationFailed(
            f"After the swap, {venv}/bin/python reports prefix {result.stdout.strip()!r}."
        )


def _unchanged(target: TargetEnv) -> str:
    if target.exists:
        return f"Nothing was changed: {target.path} is as it was."
    return f"Nothing was changed: {target.path} was not created."


def _failure(exc: BaseException, plan: InstallPlan, target: TargetEnv, log: Path) -> BaseException:
    """The error to show for ``exc``, saying that nothing changed and how to retry."""
    unchanged = _unchanged(target)
    if isinstance(exc, KeyboardInterrupt):
        return Interrupted(f"Interrupted. {unchanged}", hint="Run the same command again to retry.")
    if isinstance(exc, InstallFailed):
        return exc
    if isinstance(exc, CommandFailed):
        return backend_failure(exc, plan, log, unchanged)
    if isinstance(exc, NeuronEnvError):
        return InstallFailed(f"{exc.message} {unchanged}", hint=exc.hint or "", log=log)
    if isinstance(exc, OSError):
        return InstallFailed(
            f"{describe_os_error(exc)} {unchanged}",
            hint=f"Check free space and permissions beside {target.path}, then retry.",
            log=log,
        )
    return exc


def describe_os_error(exc: OSError) -> str:
    """An OSError in words: a full disk said plainly, a failed copy by its first error."""
    if isinstance(exc, shutil.Error) and exc.args and isinstance(exc.args[0], list):
        errors = [e for e in exc.args[0] if isinstance(e, tuple) and len(e) == 3]
        if errors:
            source, _, why = errors[0]
            if _is_disk_full(str(why)):
                return f"The disk is full (No space left on device) while copying {source}."
            more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
            return f"Copying {source} failed: {why}{more}."
    if exc.errno in (errno.ENOSPC, errno.EDQUOT) or _is_disk_full(str(exc)):
        where = f" while writing {exc.filename}" if exc.filename else ""
        return f"The disk is full (No space left on device){where}."
    where = f": {exc.filename}" if exc.filename else ""
    return f"{exc.strerror or exc}{where}."


def _is_disk_full(text: str) -> bool:
    return "No space left on device" in text or "Disk quota exceeded" in text
