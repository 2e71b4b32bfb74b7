"""What ``install`` and ``download`` produce, as plain data: the results and the failure.

Pure (no subprocesses, no probing) so that the renderers in :mod:`neuron_env.install.output` can
show them without reaching the code that does the work. :mod:`neuron_env.install.workflow`
returns one :class:`InstallOutcome` per command run.
"""

from __future__ import annotations

import shlex
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.errors import EXIT_FAILED, EXIT_OK, OperationFailed
from neuron_env.frozen import frozen

if TYPE_CHECKING:
    from neuron_env.install.plan import InstallPlan
    from neuron_env.install.wheelhouse import ForeignTags, Wheelhouse
    from neuron_env.matrix import Note


@frozen
class InstallResult:
    """What the install did: the versions now installed and how long it took."""

    venv: str
    action: str
    backend: str
    versions: dict[str, str]
    previous: dict[str, str]
    torch_import: str
    duration_s: float
    timings: dict[str, float]
    log: str


class InstallFailed(OperationFailed):
    """The install failed and nothing was changed; carries the backend's last lines."""

    def __init__(self, message: str, *, hint: str, log: Path, tail: str = "") -> None:
        super().__init__(message, hint=hint)
        self.log = log
        self.tail = tail


@frozen
class Step:
    """One step: run ``argv``, or write ``content`` to the file ``write``.

    ``display`` is the step as a shell line with every word quoted, for people to read or paste.
    ``runnable`` is False for a step printed for another host (it needs that host's shell).
    """

    summary: str
    argv: tuple[str, ...] = ()
    write: str | None = None
    content: str = ""
    runnable: bool = True
    display: str = field(init=False)

    def __post_init__(self) -> None:
        if not self.runnable:
            shown = " ".join(self.argv)  # constant text written for a shell, e.g. $(uname -r)
        elif self.write is None:
            shown = shlex.join(self.argv)
        else:
            printf = shlex.join(["printf", r"%s\n", self.content.rstrip()])
            shown = f"{printf} > {shlex.quote(self.write)}"
        object.__setattr__(self, "display", shown)


@frozen
class SystemPlan:
    """The apt steps for a release on one host, and what to keep in mind."""

    release: str
    os: str
    codename: str
    kernel: str
    steps: tuple[Step, ...]
    notes: tuple[Note, ...]


# --- what one command run produced --------------------------------------------------------------


@frozen
class InstallOutcome:
    """One run of ``install`` or ``download``; the plan alone while it is shown for a yes."""

    @property
    def exit_code(self) -> int:
        return EXIT_OK


@frozen
class EnvironmentInstall(InstallOutcome):
    """``install`` into a Python environment: the plan, and what the transaction did."""

    plan: InstallPlan
    backend: str  # the backend as the plan shows it, e.g. "uv 0.9.2"
    dry_run: bool = False
    result: InstallResult | None = None  # None: a dry run, or the plan before it runs


@frozen
class Export(InstallOutcome):
    """``install --export``: a requirements file pinning every package by version and sha256."""

    plan: InstallPlan
    tags: ForeignTags
    file: Path  # '-': stdout
    dry_run: bool = False
    text: str = ""  # the requirements file (empty for a dry run)
    wheelhouse: Wheelhouse | None = None

    @property
    def to_stdout(self) -> bool:
        return str(self.file) == "-"


@frozen
class Download(InstallOutcome):
    """``download``: a wheelhouse for another machine."""

    plan: InstallPlan
    tags: ForeignTags
    dest: Path
    dry_run: bool = False
    wheelhouse: Wheelhouse | None = None


@frozen
class SystemInstall(InstallOutcome):
    """``install --system``: the apt steps, and whether they were (or are about to be) run."""

    plan: SystemPlan
    running: bool = False  # --execute without --dry-run: the steps run once confirmed
    executed: bool = False


@frozen
class Declined(InstallOutcome):
    """The person at the terminal said no: nothing was changed (exit 1)."""

    @property
    def exit_code(self) -> int:
        return EXIT_FAILED
