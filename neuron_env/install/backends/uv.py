"""The uv backend: one ``uv pip install`` with explicit, per-package indexes.

The plan becomes a throwaway ``pyproject.toml`` whose ``[tool.uv.sources]`` pins each routed
package to an ``explicit`` index: uv takes that package from that index only, and uses explicit
indexes for nothing else. Everything else comes from the default index (``--index-url``, else uv's
own configuration). From a wheelhouse, uv installs offline with ``--require-hashes``.
"""

from __future__ import annotations

import json
from pathlib import Path

from neuron_env.install.backends.base import Backend, Session
from neuron_env.install.plan import InstallPlan
from neuron_env.install.wheelhouse import REQUIREMENTS, read_wheelhouse

PROJECT_NAME = "neuron-env-plan"


class UvBackend(Backend):
    """Installs with a uv executable."""

    name = "uv"

    def __init__(self, uv: Path) -> None:
        self.uv = uv

    def describe(self) -> str:
        return f"uv ({self.uv})"

    def create_venv(self, base_python: Path, dest: Path, session: Session) -> None:
        session.run([self.uv, "venv", "--quiet", "--no-project", "--python", base_python, dest])

    def install(self, plan: InstallPlan, python: Path, session: Session) -> None:
        argv: list[str | Path] = [self.uv, "pip", "install", "--python", python, "--no-build"]
        if plan.wheelhouse:
            argv += self._wheelhouse_args(Path(plan.wheelhouse), plan)
        else:
            argv += ["-r", write_project(plan, session.work / "plan")]
            if plan.default_route.url:
                argv += ["--default-index", plan.default_route.url]
        session.run(argv)

    @staticmethod
    def _wheelhouse_args(house: Path, plan: InstallPlan) -> list[str | Path]:
        args: list[str | Path] = ["--offline", "--no-index", "--find-links", house]
        if read_wheelhouse(house) is not None:
            return [*args, "--no-deps", "--require-hashes", "-r", house / REQUIREMENTS]
        return [*args, *plan.requirements]


def write_project(plan: InstallPlan, directory: Path) -> Path:
    """Write the plan as a ``pyproject.toml`` with explicit indexes; return its path."""
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pyproject.toml"
    path.write_text(project_toml(plan), encoding="utf-8")
    return path


def project_toml(plan: InstallPlan) -> str:
    """The TOML text (strings quoted as JSON strings, which TOML basic strings accept)."""
    q = json.dumps
    deps = ", ".join(q(r) for r in plan.requirements)
    lines = ["[project]", f"name = {q(PROJECT_NAME)}", 'version = "0"', f"dependencies = [{deps}]"]
    lines += ["", "[tool.uv.sources]"]
    lines += [
        f"{q(p.name)} = {{ index = {q(p.route)} }}"
        for p in plan.packages
        if p.route in _routed(plan)
    ]
    for route in plan.routed:
        lines += ["", "[[tool.uv.index]]", f"name = {q(route.name)}", f"url = {q(route.url)}"]
        lines.append("explicit = true")
    return "\n".join(lines) + "\n"


def _routed(plan: InstallPlan) -> set[str]:
    return {r.name for r in plan.routed}
