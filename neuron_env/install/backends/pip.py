"""The pip backend: routed downloads into a wheelhouse, then an offline, hash-checked install.

pip merges every index it is given and takes the highest version, so it never sees more than one
index at a time for a routed package: :func:`~neuron_env.install.wheelhouse.fill_wheelhouse`
downloads each routed index's pins alone (``--no-deps``), then the dependencies from the default
index with the routed wheels given as files. The install itself uses no index at all
(``--no-index --find-links``) and ``--require-hashes`` against the files just downloaded.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neuron_env.install.backends.base import Backend, Session
from neuron_env.install.lock import check_locked, wheelhouse_files
from neuron_env.install.plan import InstallPlan
from neuron_env.install.wheelhouse import ONLY_BINARY, fill_wheelhouse, wheelhouse_requirements


class PipBackend(Backend):
    """Installs with the pip of the environment being built."""

    name = "pip"

    def create_venv(self, base_python: Path, dest: Path, session: Session) -> None:
        session.run([base_python, "-m", "venv", dest])

    def install(self, plan: InstallPlan, python: Path, session: Session) -> tuple[str, ...]:
        pip = self.ensure_pip(python, session)
        if plan.wheelhouse:
            self.install_from(Path(plan.wheelhouse), plan, pip, session)
            return ()
        house = session.work / "wheels"
        house.mkdir(parents=True)
        filled = fill_wheelhouse(plan, house, pip, session)
        check_locked(plan, wheelhouse_files(filled.files), source="the indexes")
        self.install_from(house, plan, pip, session)
        pinned = {p.name for p in plan.packages}
        routed = {r.name for r in plan.routed}
        return tuple(w.name for w in filled.files if w.route in routed and w.name not in pinned)

    def uninstall(self, names: Sequence[str], python: Path, session: Session) -> None:
        pip = self.ensure_pip(python, session)
        session.run([*pip, "uninstall", "--yes", *names])

    def install_from(
        self, house: Path, plan: InstallPlan, pip: list[str | Path], session: Session
    ) -> None:
        """Install from ``house`` alone: by its hash-pinned list, or the plan's pins if none."""
        argv: list[str | Path] = [*pip, "install", "--no-index", "--find-links", house, ONLY_BINARY]
        requirements = wheelhouse_requirements(house, session.work, plan)
        if requirements is not None:
            argv += ["--no-deps", "--require-hashes", "-r", requirements]
        else:
            argv += list(plan.requirements)
        session.run(argv, env=session.env({"PIP_FIND_LINKS": str(house)}))

    @staticmethod
    def ensure_pip(python: Path, session: Session) -> list[str | Path]:
        """``python -m pip``, bootstrapping pip (offline, from ensurepip) when it is missing."""
        venv = python.parent.parent
        if not any(venv.glob("lib/python*/site-packages/pip/__init__.py")):
            session.run([python, "-m", "ensurepip", "--default-pip"])
        return [python, "-m", "pip"]
