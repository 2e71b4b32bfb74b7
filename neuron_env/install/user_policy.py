"""The one user-package policy of ``install``, ``download``, ``install --export`` and
``image render``: what a user's requirement may be, and how it joins the plan (pure).

* a Neuron name the release ships (a companion for this PyTorch, or one of the plan's own pins)
  is pinned to the release's version and comes from its routed index only, whatever specifier the
  user wrote; a specifier that excludes that version is bad input;
* any other Neuron name (the one rule of :mod:`neuron_env.matrix.names`: a placeholder-only
  name, a name of another release, ``nki*``, ``*neuron*`` …), the legacy PyTorch/XLA stack and a
  distribution a companion cannot share an environment with (upstream ``torchao`` beside TorchAO
  Neuron) are refused, each with its reason;
* everything else comes from the default index, resolved together with the plan's pins (also
  written as a constraints file), so that no user package can move torch, torch-neuronx,
  neuronx-cc or nki.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import field, replace
from typing import Literal

from packaging.markers import default_environment
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.install.lock import locked_version
from neuron_env.install.plan import InstallPlan, PlannedPackage
from neuron_env.install.user_packages import CORE, UserRequirement, exact_version
from neuron_env.invocation import command
from neuron_env.matrix import Matrix, Note, Release, Target
from neuron_env.matrix.names import is_neuron_name, neuron_kind, pattern_shown, release_neuron_names
from neuron_env.matrix.resolve import CompanionPin, Pin

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


@frozen
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
        judged = judge(matrix, release, target, req, installed)
        if judged.kind == "companion":
            pins[name] = judged.pin
        elif judged.kind == "default":
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


@frozen
class Judged:
    """What one requirement is: a pin of the plan, a companion, or a default-index package."""

    kind: Literal["pinned", "companion", "default"]
    pin: Pin


def judge(
    matrix: Matrix,
    release: Release,
    target: Target,
    req: UserRequirement,
    installed: Mapping[str, str] | None = None,
) -> Judged:
    """The policy for one requirement (markers aside); a refused one raises :class:`BadInput`."""
    name = req.name
    _refuse_conflicts(release, target, name, req)
    core = {p.name: p for p in target.pins}
    companions = {c.name: c for c in target.companions}
    if name in core:
        _check_allows(req, core[name].spec, f"Neuron {target.release} pins {name}")
        return Judged("pinned", core[name])
    if name in companions:
        companion = companions[name]
        _check_allows(req, companion.spec, f"Neuron {target.release} ships {companion.title}")
        _refuse_installed_conflicts(companion, installed or {}, req)
        return Judged("companion", _companion_pin(companion))
    if is_neuron_name(name, release_neuron_names(release)):
        raise _not_shipped(matrix, release, target, name, req)
    return Judged("default", Pin(name, str(req.parsed.specifier), None, None))


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
    pinned = exact_version(spec)
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
        f"that ships the version you want ('{command('matrix', 'list')}').",
    )


def _show(release: Release) -> str:
    return command("matrix", "show", "--release", str(release.version))


def _version(text: str) -> Version | None:
    try:
        return Version(text.removesuffix(".*"))
    except InvalidVersion:
        return None


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


def _neuron_case(name: str, release: Release) -> str:
    """Which kind of Neuron name ``name`` is, as the refusal says it."""
    kind = neuron_kind(name, release)
    if kind == "placeholder":
        versions = ", ".join(str(v) for v in release.placeholders[name].versions)
        return (
            "a Neuron package name (on the default index only its 'WRONG PACKAGE' placeholder "
            f"{versions} exists)"
        )
    if kind == "companion":
        return f"a Neuron companion ({release.companions[name].name})"
    if kind == "routed":
        return "a package of the Neuron index"
    return (
        f"a Neuron package name (it matches {pattern_shown(name)}), which only the Neuron "
        "index may serve"
    )


def _not_shipped(
    matrix: Matrix, release: Release, target: Target, name: str, req: UserRequirement
) -> BadInput:
    what = f"{name} is {_neuron_case(name, release)}"
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
            else f"Leave {name} out; '{_show(release)}' lists the companions this release ships."
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
