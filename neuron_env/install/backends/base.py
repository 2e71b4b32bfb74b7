"""The interface every install backend implements, and what a backend run is given.

A backend knows how to create a virtual environment and how to install a plan into one with
the routing rules of :mod:`neuron_env.install.plan`; it never decides what to install. Every
command goes through :mod:`neuron_env.command` with its output appended to the session's log.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import field
from pathlib import Path
from typing import ClassVar

from neuron_env.command import Completed, clean_env, run
from neuron_env.frozen import frozen
from neuron_env.install.plan import InstallPlan

#: Environment variables a backend keeps: its own configuration, where config and caches live,
#: credentials helpers and certificates. Everything else is dropped.
KEPT_PREFIXES = ("PIP_", "UV_", "XDG_")
KEPT_NAMES = ("NETRC", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "SOURCE_DATE_EPOCH")
#: Settings that would send an install somewhere other than the environment being built.
DROPPED_NAMES = ("PIP_TARGET", "PIP_PREFIX", "PIP_ROOT", "PIP_USER", "UV_SYSTEM_PYTHON")


@frozen
class Session:
    """One backend run: where its output goes, and a scratch directory."""

    log: Path
    work: Path
    timeout: float = 3600.0
    extra_env: Mapping[str, str] = field(default_factory=dict)

    def env(self, overrides: Mapping[str, str] | None = None) -> dict[str, str]:
        """The user's backend configuration (``PIP_*``, ``UV_*``) on a clean environment."""
        keep = [
            name
            for name in os.environ
            if (name.startswith(KEPT_PREFIXES) or name in KEPT_NAMES) and name not in DROPPED_NAMES
        ]
        env = clean_env(keep=keep)
        env.update(self.extra_env)
        env.update(overrides or {})
        return env

    def run(
        self, argv: Sequence[str | os.PathLike[str]], env: Mapping[str, str] | None = None
    ) -> Completed:
        return run(argv, timeout=self.timeout, env=env or self.env(), output=self.log)


class Backend(ABC):
    """Creates environments and installs plans into them."""

    name: ClassVar[str]

    @abstractmethod
    def create_venv(self, base_python: Path, dest: Path, session: Session) -> None:
        """Create an empty virtual environment at ``dest`` from ``base_python``."""

    @abstractmethod
    def install(self, plan: InstallPlan, python: Path, session: Session) -> tuple[str, ...]:
        """Install ``plan`` into the environment of ``python``, honouring its routes.

        Returns the Neuron packages the plan does not pin that it took from the Neuron index
        (dependencies of the pinned ones), so that verification accepts them.
        """

    @abstractmethod
    def uninstall(self, names: Sequence[str], python: Path, session: Session) -> None:
        """Remove the distributions ``names`` from the environment of ``python``."""

    def describe(self) -> str:
        return self.name
