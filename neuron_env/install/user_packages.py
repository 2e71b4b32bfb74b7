"""The user's own packages (``install PACKAGE ... -r FILE``): parsed, classified, added to the plan.

Pure, apart from reading requirements files. Every requirement is judged before anything is
created:

* a Neuron name the release ships (a companion for this PyTorch, or one of the plan's own pins)
  is pinned to the release's version and comes from its routed index only, whatever specifier the
  user wrote; a specifier that excludes that version is bad input;
* a Neuron name the release does not ship (an XLA-era package, a placeholder-only name), the legacy
  PyTorch/XLA stack and a distribution a companion cannot share an environment with (upstream
  ``torchao`` beside TorchAO Neuron) are refused;
* everything else comes from the default index, resolved together with the plan's pins (also
  written as a constraints file), so that no user package can move torch, torch-neuronx,
  neuronx-cc or nki.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from neuron_env.errors import BadInput
from neuron_env.install.diagnose import Cause
from neuron_env.install.lock import check_hash_mode, locked_version, split_hashes
from neuron_env.install.plan import InstallPlan, PlannedPackage
from neuron_env.matrix import Matrix, Note, Release, Target
from neuron_env.matrix.resolve import CompanionPin, Pin

#: The pins no user package may move; the constraints file lists them exactly.
CORE = ("torch", "torch-neuronx", "neuronx-cc", "nki")
CONSTRAINTS = "neuron-env-constraints.txt"

#: What to use instead of packages of the legacy PyTorch/XLA era (none runs on TorchNeuron).
_INSTEAD = {
    "torch-xla": "TorchNeuron itself: plain PyTorch with device 'neuron' (torch-neuronx).",
    "libneuronxla": "TorchNeuron itself: plain PyTorch with device 'neuron' (torch-neuronx).",
    "transformers-neuronx": "vLLM Neuron for inference, TorchTitan Neuron (torchtitan-neuron) "
    "for training.",
    "neuronx-distributed": "TorchTitan Neuron (torchtitan-neuron) for training, vLLM Neuron for "
    "inference; plain torch.distributed works on TorchNeuron.",
    "neuronx-distributed-training": "TorchTitan Neuron (torchtitan-neuron).",
    "neuronx-distributed-inference": "vLLM Neuron.",
}
_LEGACY = ("torch-xla", "libneuronxla", "transformers-neuronx", "neuronx-distributed")


@dataclass(frozen=True)
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


def gather(packages: Sequence[str], files: Sequence[Path]) -> tuple[UserRequirement, ...]:
    """The command line's requirements, then each file's; bad syntax is exit 2 naming where."""
    found = [_checked(text, "command line") for text in packages]
    for path in files:
        found += read_requirements_file(path)
    check_hash_mode(found)
    return tuple(found)


REQUIREMENTS_MAX_BYTES = 1024 * 1024


def read_requirements_file(path: Path) -> list[UserRequirement]:
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
        requirement, hashes = split_hashes(line, where)
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


@dataclass(frozen=True)
class Classified:
    """The user's packages as pins for the plan, and what the plan should say about them."""

    pins: tuple[Pin, ...]
    requested: dict[str, str]
    """Pip name → the user's requirements for it, as written, with their origin."""
    extras: dict[str, str]
    notes: tuple[Note, ...] = ()
    locked: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    """Pip name → the exact version and sha256 digests a lock gives it (empty: no lock)."""


def classify(
    matrix: Matrix,
    release: Release,
    target: Target,
    requirements: Sequence[UserRequirement],
    *,
    python: str | None = None,
    installed: Mapping[str, str] | None = None,
) -> Classified:
    """Judge every requirement (see the module docstring); bad input raises :class:`BadInput`.

    ``installed``: what the environment being upgraded holds (a companion cannot be added beside
    a distribution it conflicts with, such as upstream torchao beside torchao-neuron).
    """
    pins: dict[str, Pin] = {}
    requested: dict[str, list[str]] = {}
    extras: dict[str, set[str]] = {}
    notes: list[Note] = []
    locked: dict[str, tuple[str, tuple[str, ...]]] = {}
    core = {p.name: p for p in target.pins}
    companions = {c.name: c for c in target.companions}
    for req in requirements:
        parsed = req.parsed
        name = req.name
        if parsed.marker is not None and not parsed.marker.evaluate(_environment(python)):
            notes.append(
                Note(
                    "info",
                    "install.marker-skipped",
                    f"{req.shown()} does not apply to Python {python}; it is left out.",
                )
            )
            continue
        _refuse_conflicts(release, target, name, req)
        if name in core:
            _check_allows(req, core[name].spec, f"Neuron {target.release} pins {name}")
        elif name in companions:
            companion = companions[name]
            _check_allows(req, companion.spec, f"Neuron {target.release} ships {companion.title}")
            _refuse_installed_conflicts(companion, installed or {}, req)
            pins[name] = _companion_pin(companion)
        elif _is_neuron(name, release):
            raise _not_shipped(matrix, release, target, name, req)
        else:
            pins.setdefault(name, Pin(name, "", None, None))
            pins[name] = _merged(pins[name], parsed.specifier)
        requested.setdefault(name, []).append(req.shown())
        if req.hashes:
            locked[name] = _locked(req, locked.get(name))
        if parsed.extras:
            extras.setdefault(name, set()).update(parsed.extras)
    return Classified(
        pins=tuple(pins.values()),
        requested={name: "; ".join(texts) for name, texts in requested.items()},
        extras={name: "[" + ",".join(sorted(e)) + "]" for name, e in extras.items()},
        notes=tuple(notes),
        locked=locked,
    )


def _locked(
    req: UserRequirement, before: tuple[str, tuple[str, ...]] | None
) -> tuple[str, tuple[str, ...]]:
    """The lock's version and hashes for ``req``'s name (a name listed twice: both hashes)."""
    version = locked_version(req.text) or ""
    hashes = before[1] if before is not None else ()
    return version, tuple(dict.fromkeys((*hashes, *req.hashes)))


def _environment(python: str | None) -> dict[str, str]:
    env = {str(k): str(v) for k, v in default_environment().items()}
    if python:
        env["python_version"] = python
        env["python_full_version"] = f"{python}.0"
    return env


def _merged(pin: Pin, specifier: SpecifierSet) -> Pin:
    combined = SpecifierSet(pin.spec) & specifier
    return replace(pin, spec=str(combined))


def _companion_pin(companion: CompanionPin) -> Pin:
    return Pin(
        companion.name,
        companion.spec,
        companion.index,
        companion.index_url,
        confirmed=companion.confirmed,
        note=companion.note,
    )


def _check_allows(req: UserRequirement, spec: str, what: str) -> None:
    """A specifier that excludes the release's version of a Neuron name is bad input.

    For a wildcard pin (``==2.14.3.0.*``) the check is whether any version the user's specifier
    names (or the wildcard's base) lies in both.
    """
    wanted = req.parsed.specifier
    if not str(wanted):
        return
    pin = SpecifierSet(spec)
    pinned = _exact(spec)
    candidates: list[Version | None] = [pinned]
    if req.hashes:  # a lock names the exact file's version (torch==2.14.0+cpu within ==2.14.0)
        candidates.append(_version(locked_version(req.text) or ""))
    if pinned is None:
        bases = [s.version.removesuffix(".*") for s in pin if s.operator == "=="]
        candidates = [_version(v) for v in [*bases, *(s.version for s in wanted)]]
    if any(v is not None and v in pin and wanted.contains(v, True) for v in candidates):
        return
    shown = str(pinned) if pinned is not None else spec
    raise BadInput(
        f"{req.shown()} excludes {req.name} {shown}, and {what} {shown}: Neuron packages "
        "come at the release's version only.",
        hint=f"Drop the version from '{req.text}' (neuron-env pins it), or pick the release "
        "that ships the version you want ('neuron-env matrix list').",
    )


def _version(text: str) -> Version | None:
    try:
        return Version(text.removesuffix(".*"))
    except InvalidVersion:
        return None


def _exact(spec: str) -> Version | None:
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


def _is_neuron(name: str, release: Release) -> bool:
    served = {n for ix in release.indexes.values() if ix.serves != ("torch",) for n in ix.serves}
    return (
        name in served
        or name in release.placeholders
        or name in release.companions
        or "neuronx" in name
        or name.startswith(("aws-neuron", "nki"))
        or name.endswith("-neuron")
    )


def _refuse_conflicts(release: Release, target: Target, name: str, req: UserRequirement) -> None:
    if name in _LEGACY or name.startswith("neuronx-distributed"):
        raise BadInput(
            f"{req.shown()} is part of the legacy PyTorch/XLA stack, which TorchNeuron replaces "
            "and cannot share an environment with; nothing was created.",
            hint=f"Use instead: {_INSTEAD.get(name, _INSTEAD['neuronx-distributed'])}",
        )
    for pip_name, companion in release.companions.items():
        if name in companion.conflicts:
            raise BadInput(
                f"{req.shown()}: upstream {name} cannot share an environment with "
                f"{pip_name} ({companion.name}), which provides the import package "
                f"'{companion.import_name or name}' in Neuron {release.version}; nothing was "
                "created.",
                hint=f"Ask for {pip_name} instead (neuron-env pins it from the Neuron "
                f"index{_families(companion.families)}).",
            )


def _refuse_installed_conflicts(
    companion: CompanionPin, installed: Mapping[str, str], req: UserRequirement
) -> None:
    present = [f"{n} {installed[n]}" for n in companion.conflicts if n in installed]
    if present:
        names = " ".join(n for n in companion.conflicts if n in installed)
        raise BadInput(
            f"{req.shown()}: the environment holds {', '.join(present)}, which cannot share it "
            f"with {companion.name} ({companion.title}, import package "
            f"'{companion.import_name or companion.name}'); nothing was changed.",
            hint=f"Uninstall it first ('python -m pip uninstall {names}' in that environment), "
            "then run the same command again.",
        )


def _families(families: Iterable[str]) -> str:
    names = ", ".join(f.capitalize() for f in families)
    return f"; it runs on {names}" if names else ""


def _not_shipped(
    matrix: Matrix, release: Release, target: Target, name: str, req: UserRequirement
) -> BadInput:
    what = f"{name} is a Neuron package name"
    placeholder = release.placeholders.get(name)
    if placeholder is not None:
        versions = ", ".join(str(v) for v in placeholder.versions)
        what += f" (on the default index only its 'WRONG PACKAGE' placeholder {versions} exists)"
    companion = release.companions.get(name)
    if companion is not None:
        torch = ", ".join(companion.torch)
        where = f"Neuron {release.version} ships {companion.name} for PyTorch {torch} only"
        hint = f"Install it with --torch {companion.torch[-1]}."
    else:
        others = [
            f"{r.version} (PyTorch {', '.join(r.companions[name].torch)})"
            for r in matrix.releases
            if name in r.companions
        ]
        where = (
            f"Neuron releases that ship it: {', '.join(others)}"
            if others
            else "no Neuron release neuron-env knows ships it for TorchNeuron"
        )
        hint = (
            f"Pick one of those releases with --release, or leave {name} out."
            if others
            else f"Leave {name} out; 'neuron-env matrix show --release {release.version}' lists "
            "the companions this release ships."
        )
    return BadInput(
        f"{req.shown()}: {what}, and Neuron {target.release} does not ship it for PyTorch "
        f"{target.torch}: {where}. Nothing was created.",
        hint=hint,
    )


def with_pins(target: Target, classified: Classified) -> Target:
    """The target with the user's packages after the release's own pins."""
    return replace(target, pins=(*target.pins, *classified.pins))


def apply_to_plan(plan: InstallPlan, classified: Classified) -> InstallPlan:
    """Mark the user's packages in ``plan`` (as written, extras) and add the notes."""
    packages = tuple(
        _requested(p, classified) if p.name in classified.requested else p for p in plan.packages
    )
    notes = [*plan.notes, *classified.notes]
    if classified.requested:
        notes.append(_constraints_note(replace(plan, packages=packages)))
        if plan.action == "upgrade":
            notes.append(
                Note(
                    "info",
                    "install.keeps-packages",
                    f"The packages already in {plan.venv} stay as they are, unless resolving "
                    "the plan's pins with your packages needs another version of one.",
                )
            )
    return replace(plan, packages=packages, notes=tuple(notes))


def _requested(package: PlannedPackage, classified: Classified) -> PlannedPackage:
    """``package`` as the user asked for it; a locked one pinned to the lock's exact file."""
    package = replace(
        package,
        requested=classified.requested[package.name],
        extras=classified.extras.get(package.name, ""),
    )
    if package.name not in classified.locked:
        return package
    version, hashes = classified.locked[package.name]
    return replace(package, spec=f"=={version}", hashes=hashes)


def _constraints_note(plan: InstallPlan) -> Note:
    core = ", ".join(
        f"{p.name} {p.spec.removeprefix('==')}" for p in plan.packages if p.name in CORE
    )
    return Note(
        "info",
        "install.user-packages",
        f"Your packages are resolved together with the release's pins ({core}) as "
        "constraints: a package that needs another version of one of them fails the install.",
    )


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
    pins = {p.name: str(_exact(p.spec) or p.spec) for p in plan.packages if p.name in CORE}
    sentence = conflict_sentence(output, plan.release, pins)
    if sentence is None:
        return None
    return Cause(
        "user-conflict",
        sentence,
        "Drop that package or pick a version of it that works with these pins, or pick the "
        "release that pairs the version it needs ('neuron-env matrix list').",
    )


def check_wheelhouse_has(directory: Path, names: Iterable[str], plan: InstallPlan) -> None:
    """Refuse, before anything is created, an offline install of a package the wheelhouse lacks.

    ``names``: the distributions the wheelhouse's manifest lists.
    """
    present = {str(canonicalize_name(n)) for n in names}
    missing = [p.name for p in plan.packages if p.requested and p.name not in present]
    if not missing:
        return
    wanted = " ".join(sorted(p.requirement for p in plan.packages if p.requested))
    raise BadInput(
        f"Wheelhouse {directory} has no {', '.join(missing)}: it was filled without "
        f"{'it' if len(missing) == 1 else 'them'}, and an offline install cannot fetch "
        "anything. Nothing was created.",
        hint=f"Fill it again on a connected machine with 'neuron-env download --torch "
        f"{plan.torch} --release {plan.release} --python-version {plan.python} -d DIR "
        f"{wanted}'.",
    )
