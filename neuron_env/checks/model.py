"""Findings, checks and the overall verdict: the judging vocabulary of neuron-env.

A check is a pure function ``(HostFacts, Context) -> Verdict``. The registry wraps each verdict
into a :class:`Finding` carrying the check's stable id and category. Check ids are a public
contract (CI scripts ``--skip`` them): never rename one.
"""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable, Mapping
from dataclasses import field
from typing import Literal

from neuron_env.errors import EXIT_FAILED, EXIT_OK, EXIT_UNKNOWN
from neuron_env.facts import HostFacts
from neuron_env.frozen import frozen
from neuron_env.matrix.model import Pairing, Release

Status = Literal["ok", "warn", "fail", "skip", "error"]
STATUSES: tuple[Status, ...] = ("ok", "warn", "fail", "skip", "error")
PROBLEMS: tuple[Status, ...] = ("warn", "fail", "error")
Overall = Literal["ok", "warn", "fail", "unknown"]
"""The run's verdict; ``unknown``: nothing failed, but a check could not judge (exit 3)."""
CATEGORIES = ("platform", "driver", "system", "python", "env", "device")


@frozen
class Verdict:
    """What one check concluded; ``fix`` is something a person can run or do."""

    status: Status
    summary: str
    detail: str = ""
    fix: str = ""


def ok(summary: str, detail: str = "") -> Verdict:
    return Verdict("ok", summary, detail)


def warn(summary: str, fix: str = "", detail: str = "") -> Verdict:
    return Verdict("warn", summary, detail, fix)


def fail(summary: str, fix: str = "", detail: str = "") -> Verdict:
    return Verdict("fail", summary, detail, fix)


def skip(summary: str, detail: str = "") -> Verdict:
    return Verdict("skip", summary, detail)


NOT_COMPARED = "Not compared: "
"""How a finding that had nothing to compare with begins: the matrix lists no value to judge by."""


def not_compared(what: str, fix: str = "", detail: str = "") -> Verdict:
    """A check that compared nothing (``Neuron 2.34.0 lists no version of X``): never ``ok``; a
    warning that keeps the run from saying Ready."""
    return Verdict("warn", NOT_COMPARED + what, detail, fix)


def compared_nothing(finding: Finding) -> bool:
    return finding.status == "warn" and finding.summary.startswith(NOT_COMPARED)


@frozen
class Finding:
    """One check's verdict in a report: which check, its status, and what to do about it."""

    check: str
    category: str
    title: str
    status: Status
    summary: str
    detail: str = ""
    fix: str = ""


@frozen
class Context:
    """What the host is judged against, and why that release and PyTorch were chosen."""

    release: Release
    release_reason: str
    pairing: Pairing | None
    torch_reason: str
    fix_target: str = ""
    """``--venv DIR`` / ``--python PATH`` (shell-quoted) naming the target in fix commands."""
    requested: bool = False
    """The release was asked for with ``--release``: another release's build fails, not warns."""
    known: tuple[Release, ...] = ()
    """Every release of the matrix: tells another release's version from an unknown one."""
    new_env: bool = False
    """The target cannot take an install (wrong Python, neuron-env's own environment): fixes
    install into a new environment, which ``install --venv`` creates with a supported Python."""
    program: str = "neuron-env"
    """How fixes name neuron-env so that they run as pasted into a fresh shell."""
    python: str = ""
    """The target interpreter, shell-quoted, for ``pip`` steps in fixes."""
    has_pip: bool = True
    legacy_family: str = ""
    """``Trn1``, ``Trn1n``, ``Inf2`` or ``Inf1`` on an instance TorchNeuron does not run on:
    checks judge the PyTorch/XLA environment that runs there, and no fix installs TorchNeuron."""
    unlisted_os: str = ""
    """The host's OS when the release does not list it (``Debian GNU/Linux 12``): install
    refuses there unless told ``--allow-unlisted-os``, so fixes that install say it."""

    @property
    def releases(self) -> tuple[Release, ...]:
        return self.known or (self.release,)

    def fix_release(self, torch: str | None = None) -> Release:
        """The release a fix installs: the one asked for with ``--release``; else the newest
        that pairs PyTorch ``torch`` (the installed one's by default), never an older detected
        one; the newest of all when none pairs it."""
        if self.requested:
            return self.release
        minor = torch or (self.pairing.torch_minor if self.pairing else None)
        pairing = [r for r in self.releases if minor and r.pairing_for(minor)]
        return (pairing or list(self.releases))[-1]

    def install_command(
        self, torch: str | None = None, release: Release | None = None, *, here: bool = True
    ) -> str:
        """The install that fixes the target: ``release`` (by default :meth:`fix_release`), for
        PyTorch ``torch`` (the installed one's) where that release pairs it, as pasted on this
        host (``here``: with ``--allow-unlisted-os`` on an OS the release does not list, which
        install refuses otherwise), or on a supported host."""
        target = release or self.fix_release(torch)
        minor = torch or (self.pairing.torch_minor if self.pairing else None)
        if minor is None or target.pairing_for(minor) is None:  # else install refuses it
            minor = target.pairings[-1].torch_minor
        parts = [self.program, "install --torch", minor, "--release", str(target.version)]
        parts += ["--venv", NEW_ENV] if self.new_env else [self.fix_target]
        if here and self.unlisted_os:
            parts.append(ALLOW_UNLISTED_OS)
        return " ".join(p for p in parts if p)

    def uninstall_then_install(self, names: Iterable[str], torch: str | None = None) -> str:
        """Remove ``names`` from the target, then install the release (every value quoted)."""
        quoted = " ".join(shlex.quote(n) for n in names)
        steps = [*self.pip_commands(f"uninstall -y {quoted}"), self.install_command(torch)]
        return " && ".join(steps)

    def pip_commands(self, *arguments: str) -> list[str]:
        """``python -m pip ARGUMENTS`` for each, after ensurepip where the target has no pip."""
        python = self.python or "python"
        steps = [] if self.has_pip else [f"{python} -m ensurepip --default-pip"]
        return [*steps, *(f"{python} -m pip {each}" for each in arguments)]


ALLOW_UNLISTED_OS = "--allow-unlisted-os"
"""install's opt-in for an OS the release does not list (see install's prepare)."""
NEW_ENV = ".venv-neuron"
"""Where fixes create an environment when the target cannot be installed into."""


CheckFunction = Callable[[HostFacts, Context], Verdict]


@frozen
class Check:
    """A registered check: its id, category and title, the facts it needs, the function that
    judges them, the device level it belongs to (0: no device test), and whether it judges the
    Trainium hardware itself (instance, driver, devices, the runtime's system packages), which a
    host without a Neuron device can never pass."""

    id: str
    category: str
    title: str
    description: str
    needs: tuple[str, ...]
    run: CheckFunction
    level: int = 0
    needs_hardware: bool = False


@frozen
class Summary:
    """The overall verdict. ``allowed`` lists checks that did not pass but may not fail the run."""

    status: Overall
    counts: dict[str, int]
    exit_code: int
    strict: bool = False
    allowed: tuple[str, ...] = field(default=())
    allowed_reasons: dict[str, str] = field(default_factory=dict)
    """Why each allowed check may fail, as the project file says (``allow = {id = "why"}``)."""
    allowed_by: dict[str, str] = field(default_factory=dict)
    """Each allowed check's words: ``allowed by FILE: reason`` or ``allowed by --allow``."""
    needs_hardware: tuple[str, ...] = ()
    """Checks that did not pass only because this host has no Neuron device: they make the run
    ``unknown`` (exit 3: ready except what needs Trainium hardware), never ``fail``."""
    uncompared: tuple[str, ...] = ()
    """Checks that compared nothing (the matrix lists no value to judge by): the run is
    ``unknown`` (exit 3), never Ready."""

    def is_allowed(self, finding: Finding) -> bool:
        return finding.check in self.allowed

    def waits_for_hardware(self, finding: Finding) -> bool:
        return finding.check in self.needs_hardware


def summarize(
    findings: Iterable[Finding],
    *,
    strict: bool = False,
    allow: Iterable[str] = (),
    hardware: Iterable[str] = (),
) -> Summary:
    """The overall verdict: a failure fails (exit 1), and so does a warning when strict; else a
    check that could not judge (``error``) makes it ``unknown`` (exit 3: not "not ready").

    Checks named in ``allow`` are reported as they are but never fail the run. Checks named in
    ``hardware`` (those that need Trainium hardware, on a host without a Neuron device) that did
    not pass make it ``unknown`` too: what they judge is not on this host. So do checks that
    compared nothing (:func:`not_compared`): nothing was judged, so nothing is known to be ready.
    """
    findings = list(findings)
    allow, hardware = set(allow), set(hardware)
    counts: dict[str, int] = {s: sum(f.status == s for f in findings) for s in STATUSES}
    waiting = tuple(
        f.check for f in findings if f.check in hardware - allow and f.status in PROBLEMS
    )
    counted = {f.status for f in findings if f.check not in allow and f.check not in waiting}
    allowed = tuple(f.check for f in findings if f.check in allow and f.status != "ok")
    uncompared = tuple(f.check for f in findings if f.check not in allow and compared_nothing(f))

    def verdict(status: Overall, exit_code: int) -> Summary:
        return Summary(
            status, counts, exit_code, strict, allowed, needs_hardware=waiting,
            uncompared=uncompared,
        )  # fmt: skip

    if "fail" in counted:
        return verdict("fail", EXIT_FAILED)
    warned: Overall = "warn" if "warn" in counted else "ok"
    if strict and warned == "warn":
        return verdict("warn", EXIT_FAILED)
    if "error" in counted or waiting or uncompared:
        return verdict("unknown", EXIT_UNKNOWN)
    return verdict(warned, EXIT_OK)


@frozen
class DoctorReport:
    """Everything a renderer needs: findings, the verdict, and what the host was judged against."""

    findings: tuple[Finding, ...]
    summary: Summary
    release: str
    release_reason: str
    torch: str | None
    torch_reason: str
    facts: HostFacts
    level: int = 0
    next_step: str = ""
    """When the target is neuron-env's own environment (no PyTorch): the one command that
    creates a TorchNeuron environment, which the report leads with."""
    needs: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """Each judged check's fact kinds, so that ``-v`` can say where a passing check read them."""
    legacy_host: str = ""
    """On Trn1, Trn1n, Inf2 or Inf1: the line said once at the top (TorchNeuron needs
    Trn2/Trn3; the environment that runs there is judged)."""
    unlisted_os: str = ""
    """The host's OS when the release does not list it: the next step installs anyway
    (``--allow-unlisted-os``), and the report says it is unsupported."""
    target_chosen_by: str = ""
    config: str | None = None
    """The project file applied, as messages name it (None: none)."""
    config_ignored: tuple[tuple[str, str], ...] = ()
    """Project files found but not trusted, and why: (path, reason)."""
    """How the judged interpreter was chosen: ``--python``, ``$VIRTUAL_ENV``, ``./.venv-neuron``,
    neuron-env's own environment, or ``--facts`` (a snapshot's)."""


@frozen
class CheckListing:
    """``doctor --list-checks``: every check the doctor knows."""

    checks: tuple[Check, ...]
