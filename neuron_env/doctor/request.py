"""What a ``doctor``, ``preflight`` or ``facts`` run asks for: one request per command, composed.

A doctor request holds a facts request (what to probe) and the judging options (how to judge);
``facts`` takes the facts request alone and ``fleet`` the judging options alone. This module
imports no check and no probe, so a command builds its request before either loads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.frozen import frozen

if TYPE_CHECKING:  # a type only: a doctor run at level 0 imports nothing of the self-test
    from neuron_env.project_config import ProjectDefaults
    from neuron_env.selftest.workflow import DeviceProgress


@frozen(kw_only=True)
class FactsRequest:
    """What to probe: the target interpreter, the host's root, and how deep (device levels)."""

    python: Path | None = None
    sysroot: Path = Path("/")
    probe_timeout: float = 15.0
    level: int = 0
    device_progress: DeviceProgress | None = None


def probe_request(
    python: Path | None,
    sysroot: Path,
    probe_timeout: float,
    level: int,
    device_progress: DeviceProgress,
) -> FactsRequest:
    """What a command line (``facts``, ``doctor``, ``preflight``) asks to probe, in the order of
    its flags, with the view that shows the device levels' progress."""
    return FactsRequest(
        python=python,
        sysroot=sysroot,
        probe_timeout=probe_timeout,
        level=level,
        device_progress=device_progress,
    )


@frozen
class DoctorOptions:
    """How facts are judged: the release and PyTorch to judge against (None: detected), which
    checks run, whether warnings fail, the device level, the finding ids allowed to fail, and
    whether a host with no Neuron device may be "ready except what needs Trainium hardware"
    (``doctor``: a developer's machine or a CI runner) rather than not ready (``preflight`` and
    ``fleet`` judge Trainium nodes: a node without its devices is not ready)."""

    release: str | None = None
    torch: str | None = None
    only: Sequence[str] = ()
    skipped: Sequence[str] = ()
    strict: bool = False
    level: int = 0
    allow: Sequence[str] = ()
    allow_reasons: Mapping[str, str] = dataclasses.field(default_factory=dict)
    hardware_optional: bool = False
    config: str | None = None
    """The project file applied (where ``allow_reasons`` come from), as messages name it."""
    config_ignored: tuple[tuple[str, str], ...] = ()
    """Project files found but not trusted: (path, why)."""

    def over(self, defaults: ProjectDefaults) -> DoctorOptions:
        """These options (the flags) over a project file's ``defaults``: its release and PyTorch
        where no flag names one, its allowed checks and then the flags' own, and the file's name
        and the files ignored, as the report says them."""
        allow = (*defaults.allow, *(a for a in self.allow if a not in defaults.allow))
        return dataclasses.replace(
            self,
            release=self.release or defaults.release,
            torch=self.torch or defaults.torch,
            allow=allow,
            allow_reasons=defaults.allow,
            config=defaults.config,
            config_ignored=defaults.ignored_reasons,
        )


@frozen(kw_only=True)
class DoctorRequest:
    """One doctor (or preflight) run: the facts, probed as ``facts`` asks or read from
    ``facts_file``, judged as ``judging`` asks against the matrix in ``matrix_dirs``.

    The device level is one: the facts are probed as deep as they are judged, so ``facts`` and
    ``judging`` must name the same level.
    """

    facts: FactsRequest = dataclasses.field(default_factory=FactsRequest)
    judging: DoctorOptions = dataclasses.field(default_factory=DoctorOptions)
    facts_file: Path | None = None
    matrix_dirs: Sequence[Path] = ()

    def __post_init__(self) -> None:
        if self.facts.level != self.judging.level:
            raise ValueError(
                f"facts probed at level {self.facts.level} but judged at {self.judging.level}"
            )
