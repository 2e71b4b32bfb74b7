"""The user's own packages (``install PACKAGE ... -r FILE``): read, checked as requirements, and
what the install does with them once judged (constraints, conflicts named from the backend's
output, a wheelhouse that lacks one).

They are judged, before anything is created, by the one policy of
:mod:`neuron_env.install.user_policy`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.install.diagnose import Cause
from neuron_env.install.lock import check_hash_mode, split_hashes
from neuron_env.install.plan import InstallPlan
from neuron_env.install.wheelhouse import fill_new
from neuron_env.invocation import command

#: The pins no user package may move; the constraints file lists them exactly.
CORE = ("torch", "torch-neuronx", "neuronx-cc", "nki")
CONSTRAINTS = "neuron-env-constraints.txt"


@frozen
class UserRequirement:
    """One requirement as the user wrote it, and where (``command line`` or ``FILE:LINE``)."""

    text: str
    origin: str
    hashes: tuple[str, ...] = ()
    """The sha256 digests of its ``--hash`` options (a lock, as ``install --export`` writes)."""

    @property
    def parsed(self) -> Requirement:
        return Requirement(self.text)

    @property
    def name(self) -> str:
        return str(canonicalize_name(self.parsed.name))

    def shown(self) -> str:
        return f"'{self.text}' ({self.origin})"


def gather(
    packages: Sequence[str], files: Sequence[Path], torch: str
) -> tuple[UserRequirement, ...]:
    """The command line's requirements, then each file's; bad syntax is exit 2 naming where
    (``torch``: the PyTorch asked for, for the hint that exports a malformed lock again)."""
    found = [_checked(text, "command line") for text in packages]
    for path in files:
        found += read_requirements_file(path, torch)
    check_hash_mode(found, torch)
    return tuple(found)


REQUIREMENTS_MAX_BYTES = 1024 * 1024


def read_requirements_file(path: Path, torch: str) -> list[UserRequirement]:
    """pip's requirements syntax, the subset neuron-env routes: one requirement a line.

    Comments (``#`` at a line's start or after whitespace) and blank lines are skipped; a line
    may end in ``--hash=sha256:...`` options (:mod:`neuron_env.install.lock`); option
    lines (``--index-url``, ``-e``, ``-r``, ``-c`` …) are refused: indexes are the matrix's, and
    an editable or nested file could bring in packages that were never classified.
    """
    from neuron_env.input_files import InputRejected, read_text

    try:  # bounded, and never blocked on: a FIFO or /dev/zero is refused, not read
        text = read_text(path, REQUIREMENTS_MAX_BYTES)
    except InputRejected as exc:
        raise BadInput(f"Cannot read requirements file {path}: {exc}.") from None
    text = text.removeprefix("\ufeff")  # a byte order mark, as Windows editors write; pip skips it
    found = []
    for number, raw in enumerate(_joined_lines(text), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if not line:
            continue
        where = f"{path}:{number}"
        if line.startswith("-"):
            option = line.split()[0].split("=")[0]
            raise BadInput(
                f"{where}: the option line '{line}' is not supported; a requirements file given "
                f"to neuron-env holds one requirement a line (no {option}).",
                hint="neuron-env picks the indexes itself (--index-url names the default index's "
                "mirror); list each package on its own line, and give more files with more -r.",
            )
        requirement, hashes = split_hashes(line, where, torch)
        found.append(replace(_checked(requirement, where), hashes=hashes))
    return found


def _joined_lines(text: str) -> list[str]:
    """Lines, a trailing backslash continuing one onto the next: the joined line keeps the
    number of its first line (as pip reports it), the lines it took are left empty."""
    out: list[str] = []
    start: int | None = None
    for line in text.splitlines():
        out.append("")
        start = len(out) - 1 if start is None else start
        continued = line.endswith("\\")
        out[start] += (line[:-1] + " ") if continued else line
        start = start if continued else None
    return out


def _checked(text: str, origin: str) -> UserRequirement:
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise BadInput(
            f"{origin}: '{text}' is not a requirement ({exc}).",
            hint="Write a PEP 508 requirement, e.g. 'transformers>=4.50' or 'datasets'.",
        ) from None
    if requirement.url:
        raise BadInput(
            f"{origin}: '{text}' names a URL; neuron-env installs packages from the indexes it "
            "routes, by name and version.",
            hint="Give the package by name (and version), or install it afterwards yourself.",
        )
    return UserRequirement(text, origin)


def exact_version(spec: str) -> Version | None:
    try:
        specs = list(SpecifierSet(spec))
    except ValueError:
        return None
    for s in specs:
        if s.operator in ("==", "===") and "*" not in s.version:
            try:
                return Version(s.version)
            except InvalidVersion:
                return None
    return None


def write_constraints(plan: InstallPlan, directory: Path) -> Path | None:
    """The constraints file of a plan with user packages: the core pins, exact (else None).

    The pins are in the resolution already; as constraints too, no requirement of a user package
    can widen or move them, whatever resolver reads it (pip or uv).
    """
    if not any(p.requested for p in plan.packages):
        return None
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / CONSTRAINTS
    lines = [f"{p.name}{p.spec}\n" for p in plan.packages if p.name in CORE and p.spec]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def user_requirements_from(plan: InstallPlan, route: str) -> list[str]:
    """The requirements of the user's packages that come from ``route``."""
    return [p.requirement for p in plan.packages if p.requested and p.route == route]


#: uv: "Because greedy==1.0 depends on torch==2.15.0 and ..."; pip: "greedy 1.0 depends on …".
_UV_CONFLICT = re.compile(
    r"(?:only )?(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)==(?P<version>[^\s,]+) depends on "
    r"(?P<need>(?:torch|torch-neuronx|neuronx-cc|nki)\b[^\s,]*)"
)
_UV_ALL_CONFLICT = re.compile(
    r"all versions of (?P<name>[A-Za-z0-9][A-Za-z0-9._-]*) depend on "
    r"(?P<need>(?:torch|torch-neuronx|neuronx-cc|nki)\b[^\s,]*)"
)
_PIP_CONFLICT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*) (?P<version>\S+) depends on "
    r"(?P<need>(?:torch|torch-neuronx|neuronx-cc|nki)\b[^\s,]*)",
    re.MULTILINE,
)


def conflict_sentence(output: str, release: str, pins: dict[str, str]) -> str | None:
    """``greedy 1.0 needs torch==2.15.0; Neuron 2.33.0 pairs torch 2.14.0``, from the output.

    ``pins``: the core package names and their pinned versions. None when no user package's
    requirement on a core pin is named (another failure).
    """
    for pattern in (_UV_CONFLICT, _UV_ALL_CONFLICT, _PIP_CONFLICT):
        for match in pattern.finditer(output):
            name = str(canonicalize_name(match["name"]))
            if name in CORE:
                continue
            need = match["need"]
            core = re.match(r"[A-Za-z0-9._-]+", need)
            core_name = str(canonicalize_name(core.group(0))) if core else ""
            if core_name not in pins:
                continue
            verb = "pairs" if core_name == "torch" else "pins"
            versions = match.groupdict().get("version")
            which = f"{name} {versions}" if versions else f"{name} (every version)"
            return f"{which} needs {need}; Neuron {release} {verb} {core_name} {pins[core_name]}."
    return None


def user_conflict(output: str, plan: InstallPlan) -> Cause | None:
    """A user package that needs another version of a core pin, named from the backend's output."""
    if not any(p.requested for p in plan.packages):
        return None
    pins = {p.name: str(exact_version(p.spec) or p.spec) for p in plan.packages if p.name in CORE}
    sentence = conflict_sentence(output, plan.release, pins)
    if sentence is None:
        return None
    return Cause(
        "user-conflict",
        sentence,
        "Drop that package or pick a version of it that works with these pins, or pick the "
        f"release that pairs the version it needs ('{command('matrix', 'list')}').",
    )


def check_wheelhouse_has(directory: Path, names: Iterable[str], plan: InstallPlan) -> None:
    """Refuse, before anything is created, an offline install of a package the wheelhouse lacks.

    ``names``: the distributions the wheelhouse's manifest lists.
    """
    present = {str(canonicalize_name(n)) for n in names}
    missing = [p.name for p in plan.packages if p.requested and p.name not in present]
    if not missing:
        return
    wanted = sorted(p.requirement for p in plan.packages if p.requested)
    raise BadInput(
        f"Wheelhouse {directory} has no {', '.join(missing)}: it was filled without "
        f"{'it' if len(missing) == 1 else 'them'}, and an offline install cannot fetch "
        "anything. Nothing was created.",
        hint=fill_new(plan, *wanted),
    )
