"""Resolution: (torch X.Y, python, OS, arch, instance type, release) → a :class:`Target`.

A pure function over matrix data. The Target holds exact pins, the index each pinned package must
come from, the release's system packages, and notes (information and warnings) a person should see.
Requests the matrix says cannot work raise :class:`UnsupportedCombination` naming what *is*
supported.
"""

from __future__ import annotations

import shlex
from collections.abc import Iterator, Sequence
from typing import Literal

from packaging.version import InvalidVersion, Version

from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.frozen import frozen
from neuron_env.matrix.load import Matrix
from neuron_env.matrix.model import Pairing, Release
from neuron_env.schema import did_you_mean
from neuron_env.wording import join_words, version_span

NoteLevel = Literal["info", "warning"]

ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}


@frozen
class Request:
    """What the user asked for; everything but ``torch`` is optional."""

    torch: str
    python: str | None = None
    os: str | None = None
    arch: str | None = None
    instance_type: str | None = None
    release: str | None = None


@frozen
class Pin:
    """One pinned Python package and the only index it may come from."""

    name: str
    spec: str
    index: str | None
    index_url: str | None
    confirmed: bool = True
    note: str = ""

    @property
    def requirement(self) -> str:
        return f"{self.name}{self.spec}"


@frozen
class CompanionPin:
    """A companion the target can take on request (TorchTitan Neuron), pinned to its index."""

    name: str
    title: str
    spec: str
    index: str
    index_url: str
    families: tuple[str, ...]
    import_name: str = ""
    conflicts: tuple[str, ...] = ()
    confirmed: bool = True
    families_confirmed: bool = True
    note: str = ""

    @property
    def requirement(self) -> str:
        return f"{self.name}{self.spec}"


@frozen
class SystemPin:
    """An apt package of the release; ``version`` is None where the release's pin is unknown."""

    name: str
    role: str
    version: str | None
    required: bool
    confirmed: bool


@frozen
class Note:
    """Something to tell the user about the target; ``code`` is a stable identifier."""

    level: NoteLevel
    code: str
    message: str


@frozen
class Target:
    """A fully resolved environment: what to install, from where, and what to keep in mind."""

    release: str
    release_status: str
    torch: str
    torch_neuronx: str
    python: str | None
    os: str | None
    arch: str | None
    instance_type: str | None
    pins: tuple[Pin, ...]
    system_packages: tuple[SystemPin, ...]
    notes: tuple[Note, ...]
    companions: tuple[CompanionPin, ...] = ()
    """Packages that ride on this target when asked for; none is installed by default."""

    def pin(self, name: str) -> Pin:
        return next(p for p in self.pins if p.name == name)

    @property
    def warnings(self) -> tuple[Note, ...]:
        return tuple(n for n in self.notes if n.level == "warning")


def _unconfirmed_pins(release: str, pins: Sequence[Pin], program: str) -> list[Note]:
    """One line for all of a release's unconfirmed pins: one warning each drowned the rest, and
    ``matrix show`` already says why each one is unconfirmed."""
    count = sum(1 for p in pins if not p.confirmed)
    if not count:
        return []
    noun = "pin" if count == 1 else "pins"
    see = f"see '{program} {shlex.join(['matrix', 'show', '--release', release])}'"
    return [Note("warning", "pin.unconfirmed", f"{release}: {count} {noun} unconfirmed — {see}")]


def resolve_target(matrix: Matrix, request: Request, *, program: str = "neuron-env") -> Target:
    """Resolve ``request`` against ``matrix`` (the latest release unless one is named).

    ``program``: how the notes' commands name neuron-env; the edges pass
    :func:`neuron_env.invocation.program` (the matrix itself never looks at how it was started).
    """
    release = matrix.get(request.release)
    pairing = _pairing(matrix, release, request.torch)
    python = _python(release, pairing, request.python)
    arch = _arch(release, request.arch)
    notes = [
        *_release_notes(release, pairing),
        *_os_notes(release, request.os),
        *_instance_notes(release, request.instance_type),
    ]
    if python is None:
        notes.append(
            Note("info", "python.unspecified", f"Supports Python {version_span(pairing.python)}.")
        )
    pins = _pins(release, pairing)
    notes.extend(_unconfirmed_pins(str(release.version), pins, program))
    return Target(
        release=str(release.version),
        release_status=release.release.status,
        torch=str(pairing.torch),
        torch_neuronx=str(pairing.torch_neuronx),
        python=python,
        os=request.os,
        arch=arch,
        instance_type=request.instance_type,
        pins=pins,
        system_packages=_system_pins(release),
        notes=tuple(notes),
        companions=companion_pins(release, pairing, request.instance_type),
    )


def _pairing(matrix: Matrix, release: Release, torch: str) -> Pairing:
    version = _parse_version(torch, "--torch", "2.14")
    minor = f"{version.major}.{version.minor}"
    pairing = release.pairing_for(minor)
    supported = [p.torch_minor for p in release.pairings]
    if pairing is None:
        elsewhere = [str(r.version) for r in matrix.releases if r.pairing_for(minor)]
        hint = (
            f"PyTorch {minor} is paired in Neuron {join_words(elsewhere)}: "
            f"add --release {elsewhere[-1]}."
            if elsewhere
            else f"Use --torch {supported[-1]}."
        )
        raise UnsupportedCombination(
            f"Neuron {release.version} pairs torch-neuronx with PyTorch {join_words(supported)} "
            f"only, not {minor}.",
            hint=hint,
        )
    if len(version.release) > 2 and version != pairing.torch:
        raise UnsupportedCombination(
            f"torch-neuronx {pairing.torch_neuronx} pairs with exactly PyTorch {pairing.torch}, "
            f"not {version}.",
            hint=f"Use --torch {minor}.",
        )
    return pairing


def _python(release: Release, pairing: Pairing, python: str | None) -> str | None:
    if python is None:
        return None
    version = _parse_version(python, "--python-version", "3.12")
    minor = f"{version.major}.{version.minor}"
    if minor not in pairing.python:
        raise UnsupportedCombination(
            f"torch-neuronx {pairing.torch_neuronx} (Neuron {release.version}) supports Python "
            f"{version_span(pairing.python)}, not {minor}.",
            hint=f"Create the environment with Python {pairing.python[0]}–{pairing.python[-1]}, "
            f"e.g. 'uv venv --python {pairing.python[0]}'.",
        )
    return minor


def _arch(release: Release, arch: str | None) -> str | None:
    if arch is None:
        return None
    arch = ARCH_ALIASES.get(arch, arch)
    if arch not in release.release.arch:
        raise UnsupportedCombination(
            f"Neuron {release.version} supports TorchNeuron on Linux "
            f"{join_words(release.release.arch)} only, not {arch}.",
            hint="Trn2 and Trn3 instances are x86_64; run on one of them.",
        )
    return arch


def _release_notes(release: Release, pairing: Pairing) -> Iterator[Note]:
    if release.release.status.endswith("beta"):
        yield Note(
            "info",
            "release.beta",
            f"TorchNeuron is a {release.release.status.replace('-', ' ')} "
            f"in Neuron {release.version}.",
        )
    if not pairing.confirmed:
        yield Note("warning", "pairing.unconfirmed", f"This pairing is unconfirmed: {pairing.note}")


def _os_notes(release: Release, os_id: str | None) -> Iterator[Note]:
    if os_id is None:
        return
    entry = release.os.get(os_id)
    if entry is None:
        raise UnsupportedCombination(
            f"Neuron {release.version} does not list OS '{os_id}'. "
            f"Known: {join_words(sorted(release.os))}.",
            hint="Pass the OS as ID-VERSION from /etc/os-release, e.g. --os ubuntu-26.04.",
        )
    if entry.support == "unsupported":
        raise UnsupportedCombination(
            f"{entry.name} is not supported by Neuron {release.version}. {entry.instead}"
        )
    if entry.support != "supported":
        yield Note(
            "warning",
            f"os.{entry.support}",
            f"{entry.name} support is {entry.support.replace('-', ' ')} in Neuron "
            f"{release.version}. {entry.instead}"
            + (f" ({entry.note})" if entry.support == "unconfirmed" and entry.note else ""),
        )
    elif not entry.wheels:
        yield Note(
            "warning",
            "os.no-wheels",
            f"Neuron {release.version} publishes no torch-neuronx pip wheels for {entry.name}. "
            f"{entry.instead}",
        )
    if not entry.confirmed and entry.support != "unconfirmed":  # else the note above says it
        yield Note("warning", "os.unconfirmed", f"{entry.name}: unconfirmed. {entry.note}")


def _instance_notes(release: Release, instance_type: str | None) -> Iterator[Note]:
    if instance_type is None:
        return
    family_name = release.family_of(instance_type)
    family = release.families.get(family_name)
    native = [name for name, fam in release.families.items() if fam.native]
    near = _near_instance_type(release, instance_type)
    if family is None:
        raise UnsupportedCombination(
            f"'{instance_type}' is not a Trainium instance the native backend supports; "
            f"it needs a {join_words(native, 'or')} instance.{near}",
            hint=f"Known types: {join_words(sorted(release.instance_types))}.",
        )
    if not family.native:
        raise UnsupportedCombination(
            family.reason, hint=f"Use a {join_words(native, 'or')} instance, e.g. trn2.48xlarge."
        )
    if instance_type not in release.instance_types:
        yield Note(
            "warning",
            "instance.unlisted",
            f"{instance_type} is not in the matrix; its family {family_name} is supported."
            f"{near} {family.note}".strip(),
        )


def _near_instance_type(release: Release, instance_type: str) -> str:
    """`` Did you mean 'trn2.48xlarge'?`` for a typo of a known type, else ""."""
    near = did_you_mean(instance_type, sorted(release.instance_types))
    return f" {near[0].upper()}{near[1:]}" if near else ""


def _pins(release: Release, pairing: Pairing) -> tuple[Pin, ...]:
    wanted = [
        ("torch", pairing.torch_spec, pairing.confirmed, pairing.note),
        ("torch-neuronx", pairing.torch_neuronx_spec, pairing.confirmed, pairing.note),
        *((n, p.requirement_spec, p.confirmed, p.note) for n, p in release.packages.items()),
    ]
    pins = []
    for name, spec, confirmed, note in wanted:
        index = release.index_for(name)
        url = release.indexes[index].url if index else None
        pins.append(Pin(name, spec, index, url, confirmed, note))
    return tuple(pins)


def companion_pins(
    release: Release, pairing: Pairing, instance_type: str | None = None
) -> tuple[CompanionPin, ...]:
    """The release's companions for ``pairing``'s PyTorch (and the instance's family, if given)."""
    family = release.family_of(instance_type) if instance_type else None
    return tuple(
        CompanionPin(
            name=name,
            title=c.name,
            spec=c.requirement_spec,
            index=c.index,
            index_url=release.indexes[c.index].url,
            families=c.families,
            import_name=c.import_name,
            conflicts=c.conflicts,
            confirmed=c.confirmed,
            families_confirmed=c.families_confirmed,
            note=c.note,
        )
        for name, c in release.companions_for(pairing.torch_minor).items()
        if family is None or family in c.families
    )


def _system_pins(release: Release) -> tuple[SystemPin, ...]:
    return tuple(
        SystemPin(
            name,
            pkg.role,
            str(pkg.version) if pkg.version else None,
            pkg.required,
            pkg.confirmed,
        )
        for name, pkg in release.system_packages.items()
    )


def _parse_version(text: str, option: str, example: str) -> Version:
    try:
        version = Version(text)
    except InvalidVersion:
        version = None
    if version is None or len(version.release) < 2:
        raise BadInput(f"{option} '{text}' is not a version like '{example}'.")
    return version


def require_pip_wheels(
    release: Release, os_id: str, *, building: str, program: str = "neuron-env"
) -> None:
    """The one rule for everything built from pip wheels for a host of ``os_id`` that neuron-env
    cannot try here (an image, a plan, a lock or a wheelhouse for ``--os``): where the matrix says
    the release publishes no torch-neuronx wheels for that OS, it is refused, whatever command
    asked. (An install on this very host may try: it verifies before it swaps anything in.)"""
    entry = release.os.get(os_id)
    if entry is None or entry.wheels:
        return
    others = sorted(k for k, e in release.os.items() if e.wheels and e.support == "supported")
    raise UnsupportedCombination(
        f"Neuron {release.version} publishes no torch-neuronx pip wheels for {entry.name}, so "
        f"{building} cannot be built for it.",
        hint=f"{entry.instead} Pick an OS with wheels: "
        f"{join_words([f'--os {k}' for k in others], 'or') or 'none is listed'}. If the index "
        f"has them now, '{program} matrix verify --release {release.version} --write' records it.",
    )
