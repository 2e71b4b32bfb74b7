"""The uv backend: resolve, check where every package comes from, then install exact files.

The plan becomes a throwaway ``pyproject.toml`` whose ``[tool.uv.sources]`` pins each routed
package to an ``explicit`` index: uv takes that package from that index only, and uses explicit
indexes for nothing else. Everything else comes from the default index (``--index-url``, else uv's
own configuration).

uv applies sources to the project's direct dependencies only: a dependency of torch-neuronx that
the plan does not pin (``libneuronxla``) would be taken from the default index, impostor
included. So nothing is installed from a resolution that has not been checked:

1. ``uv pip compile`` resolves (no install, no build) and names the index of every package;
2. a Neuron name from any index but the Neuron one is routed to the Neuron index and resolved
   again; if that index does not have it, the install is refused;
3. ``uv pip compile --format pylock.toml`` pins every file by URL and sha256, and
   ``uv pip install --no-deps -r pylock.toml`` installs exactly those files.

From a wheelhouse, uv installs offline with ``--require-hashes``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from neuron_env.errors import CommandFailed, OperationFailed
from neuron_env.frozen import frozen
from neuron_env.input_files import TOOL_OUTPUT_LIMITS, InputRejected, parse_toml, read_text
from neuron_env.install.backends.base import Backend, Session
from neuron_env.install.lock import ResolvedFile, check_locked
from neuron_env.install.plan import MISROUTED_HINT, InstallPlan
from neuron_env.install.user_packages import write_constraints
from neuron_env.install.wheelhouse import wheelhouse_requirements

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

    def install(self, plan: InstallPlan, python: Path, session: Session) -> tuple[str, ...]:
        argv: list[str | Path] = [self.uv, "pip", "install", "--python", python, "--no-build"]
        if plan.wheelhouse:
            session.run([*argv, *self._wheelhouse_args(Path(plan.wheelhouse), plan, session)])
            return ()
        project, extra, checked = self._checked_project(plan, python, session)
        lock = session.work / "plan" / "pylock.toml"
        pinned = [*self._compile(plan, project, python), "--format", "pylock.toml", "-o", lock]
        run_resolution(session, pinned, resolution_env(plan, session))
        if locked_versions(lock) != {r.name: r.version for r in checked}:
            raise OperationFailed(
                "The indexes changed between two resolutions a moment apart, so what was checked "
                "is not what would be installed; nothing was installed.",
                hint="Run the same command again.",
            )
        check_locked(plan, locked_files(lock), source="the indexes")
        session.run([*argv, "--no-deps", "-r", lock])
        return extra

    def uninstall(self, names: Sequence[str], python: Path, session: Session) -> None:
        session.run([self.uv, "pip", "uninstall", "--python", python, *names])

    def _compile(self, plan: InstallPlan, project: Path, python: Path) -> list[str | Path]:
        argv: list[str | Path] = [self.uv, "pip", "compile", "--quiet", "--no-build"]
        argv += ["--no-header", "--python", python, project]
        constraints = write_constraints(plan, project.parent)
        if constraints is not None:  # the user's packages: the core pins cannot move
            argv += ["--constraint", constraints]
        if plan.default_route.url:  # the mirror is the only default source: no uv.toml indexes
            argv += ["--no-config", "--default-index", plan.default_route.url]
        return argv

    def _checked_project(
        self, plan: InstallPlan, python: Path, session: Session
    ) -> tuple[Path, tuple[str, ...], list[Resolved]]:
        """The project to install, once its resolution takes every Neuron name from Neuron."""
        extra: tuple[str, ...] = ()
        first: list[Resolved] = []
        while True:
            project = write_project(plan, session.work / "plan", extra)
            out = session.work / "plan" / "resolved.txt"
            argv = [*self._compile(plan, project, python), "--emit-index-annotation", "-o", out]
            try:
                run_resolution(session, argv, resolution_env(plan, session))
            except CommandFailed as exc:
                if any(name in exc.output for name in extra):  # the Neuron index lacks it
                    raise misrouted_error(plan, first) from None
                raise
            resolution = parse_resolution(_tool_output(out))
            wrong = misrouted(plan, resolution)
            if not wrong:
                return project, extra, resolution
            if extra or plan.neuron_route is None:
                raise misrouted_error(plan, wrong)
            first, extra = wrong, tuple(r.name for r in wrong)

    @staticmethod
    def _wheelhouse_args(house: Path, plan: InstallPlan, session: Session) -> list[str | Path]:
        args: list[str | Path] = ["--offline", "--no-index", "--find-links", house]
        requirements = wheelhouse_requirements(house, session.work, plan)
        if requirements is not None:
            return [*args, "--no-deps", "--require-hashes", "-r", requirements]
        return [*args, *plan.requirements]


#: uv's read timeout when none is configured (seconds), and the variables that set it.
DEFAULT_READ_TIMEOUT = 30.0
TIMEOUT_VARIABLES = ("UV_HTTP_TIMEOUT", "UV_REQUEST_TIMEOUT", "HTTP_TIMEOUT")
_UNREADABLE = re.compile(r"invalid package format|failed to read from zip", re.IGNORECASE)


#: Variables that add sources; with --index-url they are left out (with uv.toml, --no-config).
SOURCE_VARIABLES = (
    "UV_CONFIG_FILE", "UV_INDEX", "UV_EXTRA_INDEX_URL", "UV_FIND_LINKS", "UV_INDEX_URL",
    "UV_DEFAULT_INDEX",
)  # fmt: skip


def resolution_env(plan: InstallPlan, session: Session) -> dict[str, str]:
    """The user's uv settings, less any other source when ``--index-url`` names the mirror."""
    env = session.env()
    if plan.default_route.url:
        for name in SOURCE_VARIABLES:
            env.pop(name, None)
    return env


def run_resolution(session: Session, argv: list[str | Path], env: dict[str, str]) -> None:
    """Run ``uv pip compile``; a download that stalled is said so, not taken for corruption.

    While resolving, uv reads wheels as zip streams, and a read that times out surfaces as "Failed
    to read from zip file": when the run took at least uv's read timeout, that is what happened.
    """
    started = time.monotonic()
    try:
        session.run(argv, env=env)
    except CommandFailed as exc:
        timeout = read_timeout(env)
        if time.monotonic() - started < timeout or not _UNREADABLE.search(exc.output):
            raise
        note = f"\n(neuron-env: no data for {timeout:g} s, uv's read timeout: the download stalled)"
        raise CommandFailed(
            exc.argv, exc.message, returncode=exc.returncode, output=exc.output + note
        ) from None


def read_timeout(env: dict[str, str]) -> float:
    """uv's read timeout in seconds, from its environment variables."""
    for name in TIMEOUT_VARIABLES:
        try:
            return float(env[name])
        except (KeyError, ValueError):
            continue
    return DEFAULT_READ_TIMEOUT


@frozen
class Resolved:
    """One package of a resolution and the index uv took it from (None: not said)."""

    name: str
    version: str
    index: str | None


def parse_resolution(text: str) -> list[Resolved]:
    """The ``name==version`` lines and their ``# from URL`` (``--emit-index-annotation``)."""
    found: list[Resolved] = []
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# from ") and found:
            found[-1] = replace(found[-1], index=stripped.removeprefix("# from ").strip())
        elif stripped and not line[0].isspace() and not stripped.startswith(("#", "-")):
            requirement = stripped.split(";")[0].split(" ")[0]
            name, _, version = requirement.partition("==")
            found.append(Resolved(str(canonicalize_name(name)), version, None))
    return found


def locked_versions(lock: Path) -> dict[str, str]:
    """Name → version of every package a ``pylock.toml`` installs."""
    doc = _lock_document(lock)
    return {
        str(canonicalize_name(p["name"])): str(p.get("version", ""))
        for p in doc.get("packages", [])
    }


def _lock_document(lock: Path) -> dict[str, Any]:
    """A ``pylock.toml`` uv wrote, read and parsed bounded."""
    try:
        return parse_toml(_tool_output(lock), TOOL_OUTPUT_LIMITS)
    except InputRejected as exc:
        raise OperationFailed(
            f"uv wrote a lock file that cannot be read ({exc.problem})."
        ) from None


def _tool_output(path: Path) -> str:
    """A file uv wrote, read bounded like any other."""
    try:
        return read_text(path, TOOL_OUTPUT_LIMITS.max_bytes)
    except InputRejected as exc:
        raise OperationFailed(
            f"uv wrote {path.name}, which cannot be read ({exc.problem})."
        ) from None


def locked_files(lock: Path) -> list[ResolvedFile]:
    """Every package of a ``pylock.toml`` with its wheels' names and sha256 digests."""
    doc = _lock_document(lock)
    found = []
    for package in doc.get("packages", []):
        wheels = package.get("wheels", [])
        files = ", ".join(_wheel_name(w) for w in wheels) or "no wheel"
        digests = tuple(str(w.get("hashes", {}).get("sha256", "")) for w in wheels)
        name, version = str(package["name"]), str(package.get("version", ""))
        found.append(ResolvedFile(name, version, files, digests))
    return found


def _wheel_name(wheel: dict[str, object]) -> str:
    """A pylock wheel's file name: its ``name``, else the last part of its URL or path."""
    where = str(wheel.get("name") or wheel.get("url") or wheel.get("path") or "")
    return where.rsplit("/", 1)[-1].split("#")[0] or "an unnamed wheel"


def misrouted(plan: InstallPlan, resolution: list[Resolved]) -> list[Resolved]:
    """The packages taken from an index other than the only one they may come from."""
    wrong = []
    for package in resolution:
        route = plan.required_route(package.name)
        if route is None:
            continue
        if route.url is None or _url(package.index) != _url(route.url):
            wrong.append(package)
    return wrong


def misrouted_error(plan: InstallPlan, wrong: list[Resolved]) -> OperationFailed:
    neuron = plan.neuron_route
    where = f"the Neuron index at {neuron.url}" if neuron else "the Neuron index"
    names = ", ".join(f"{r.name} {r.version} (from {r.index or 'an unnamed index'})" for r in wrong)
    return OperationFailed(
        f"The resolution takes {names}, but Neuron packages come only from {where}, which does "
        "not offer it; it was refused before anything was installed: it may be an impostor.",
        hint=MISROUTED_HINT,
    )


def _url(url: str | None) -> str:
    return (url or "").rstrip("/")


def write_project(plan: InstallPlan, directory: Path, extra: tuple[str, ...] = ()) -> Path:
    """Write the plan as a ``pyproject.toml`` with explicit indexes; return its path.

    ``extra`` names Neuron packages the plan does not pin that must come from the Neuron index.
    """
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "pyproject.toml"
    path.write_text(project_toml(plan, extra), encoding="utf-8")
    return path


def project_toml(plan: InstallPlan, extra: tuple[str, ...] = ()) -> str:
    """The TOML text (strings quoted as JSON strings, which TOML basic strings accept)."""
    q = json.dumps
    deps = ", ".join(q(r) for r in (*plan.requirements, *extra))
    lines = ["[project]", f"name = {q(PROJECT_NAME)}", 'version = "0"', f"dependencies = [{deps}]"]
    lines += ["", "[tool.uv.sources]"]
    lines += [
        f"{q(p.name)} = {{ index = {q(p.route)} }}"
        for p in plan.packages
        if p.route in _routed(plan)
    ]
    neuron = plan.neuron_route
    if neuron is not None:
        lines += [f"{q(name)} = {{ index = {q(neuron.name)} }}" for name in extra]
    for route in plan.routed:
        lines += ["", "[[tool.uv.index]]", f"name = {q(route.name)}", f"url = {q(route.url)}"]
        lines.append("explicit = true")
    return "\n".join(lines) + "\n"


def _routed(plan: InstallPlan) -> set[str]:
    return {r.name for r in plan.routed}
