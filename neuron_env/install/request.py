"""What ``install`` and ``download`` are asked to do: one keyword-only request each.

The fields both commands take are declared once, in :class:`Selection`; :class:`InstallRequest`
and :class:`DownloadRequest` add their own. The plan is made from them (:mod:`.prepare`) and the
work done by :mod:`neuron_env.install.workflow`. What the person at the terminal sees and answers
meanwhile comes in as callbacks (:class:`Display`), so none of this imports a terminal library.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import field
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.install.outcome import InstallFailed, InstallOutcome
from neuron_env.install.plan import Mirrors
from neuron_env.invocation import command

Phase = Callable[[str], None]
#: Opens the progress display for one run whose backend writes to the log (the path given).
PhaseProgress = Callable[[Path], AbstractContextManager[Phase]]


def _ignore(_: object) -> None:
    return None


def _no_progress(_: Path) -> AbstractContextManager[Phase]:
    return nullcontext(_ignore)


@frozen(kw_only=True)
class Display:
    """The terminal's part, supplied by the CLI; by default nothing is shown and nobody asked.

    ``plan`` shows the plan before anything runs (None: it is not shown, and a plan nobody saw is
    not asked about). ``progress`` shows the phases while the backend runs; ``failed`` shows what
    an install that failed left in its log; ``notice`` says what the user must see even with
    ``--json``. ``confirm`` asks a yes/no question (None: there is no terminal to ask on).
    """

    plan: Callable[[InstallOutcome], None] | None = None
    progress: PhaseProgress = _no_progress
    failed: Callable[[InstallFailed], None] = _ignore
    notice: Callable[[str], None] = _ignore
    confirm: Callable[[str], bool] | None = None


@frozen(kw_only=True)
class Selection:
    """What both commands take: the pins (release, PyTorch, OS), the indexes, the user's own
    packages, and how the run goes (dry run, log, the terminal's part)."""

    torch: str | None = None
    release: str | None = None
    os: str | None = None
    mirrors: Mirrors = field(default_factory=Mirrors)
    packages: Sequence[str] = ()
    """The user's own packages as written (``PACKAGE ...``), PEP 508."""
    requirements: Sequence[Path] = ()
    """Requirements files (``-r FILE``), read after ``packages``."""
    sysroot: Path = Path("/")
    matrix_dirs: Sequence[Path] = ()
    dry_run: bool = False
    log: Path | None = None
    display: Display = field(default_factory=Display)

    def pinned_torch(self) -> str:
        """The PyTorch minor asked for; without one, bad input saying how to give it."""
        if self.torch is None:
            raise BadInput(
                "Which PyTorch? Give --torch X.Y, e.g. --torch 2.14.",
                hint=f"'{command('matrix', 'list')}' shows the pairings of each release.",
            )
        return self.torch


@frozen(kw_only=True)
class InstallRequest(Selection):
    """``neuron-env install``: a Python environment, an ``--export`` of its pins, or the apt
    steps of ``--system``."""

    venv: Path | None = None
    python: Path | None = None
    python_version: str | None = None
    """``--python-version``: the pairing's Python to create a new environment with."""
    backend: str = "auto"
    wheelhouse: Path | None = None
    offline: bool = False
    export: Path | None = None
    system: bool = False
    execute: bool = False
    yes: bool = False
    allow_unlisted_os: bool = False
    """``--allow-unlisted-os``: on a host whose OS the release does not list, install the
    manylinux wheels anyway (with a warning) instead of refusing."""


@frozen(kw_only=True)
class DownloadRequest(Selection):
    """``neuron-env download``: a wheelhouse for the machine with ``python_version``."""

    dest: Path
    python_version: str | None = None
