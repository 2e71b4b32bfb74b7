"""The support matrix of one Neuron SDK release, as frozen dataclasses.

These classes are also the schema of ``matrices/<version>.toml`` (see :mod:`.schema`): a field
``default_lnc`` is the key ``default-lnc``, a field with a default is optional. Facts that the
references could not confirm carry ``confirmed = false`` and a ``note``; they are shown as such and
never silently treated as settled. ``sources`` name keys of the file's ``[sources]`` table.
"""

from __future__ import annotations

import datetime
import re
from dataclasses import field
from pathlib import Path
from typing import Literal

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env.frozen import frozen
from neuron_env.schema import NOT_IN_TOML

SCHEMA_VERSION = 1
MAX_NETWORK_CARDS = 64

ReleaseStatus = Literal["private-beta", "public-beta", "ga", "maintenance", "end-of-support"]
SupportStatus = Literal["supported", "end-of-support", "disputed", "unconfirmed", "unsupported"]
SystemRole = Literal["driver", "runtime", "collectives", "tools", "oci-hook", "other"]
DlamiKind = Literal["single-framework", "multi-framework", "base"]
LimitationKind = Literal["unsupported-api", "dtype", "compile", "feature", "platform"]
UsageClass = Literal["on-demand", "spot", "capacity-block"]
LibraryLine = Literal["xla", "native"]
LibraryStatus = Literal["supported", "beta", "maintenance", "end-of-support", "unsupported"]


@frozen
class ReleaseInfo:
    """Identity and status of the release."""

    version: Version
    date: datetime.date
    status: ReleaseStatus
    summary: str
    arch: tuple[str, ...]
    min_glibc: str | None = None
    notes: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()


@frozen
class Pairing:
    """One torch-neuronx family and the single PyTorch release and Pythons it works with."""

    torch: Version
    torch_neuronx: Version
    python: tuple[str, ...]
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.torch_neuronx.release[:2] != self.torch.release[:2]:
            raise ValueError(
                f"torch-neuronx family {self.torch_neuronx} does not belong to torch {self.torch} "
                "(a family's first two numbers are the PyTorch minor it pairs with)"
            )
        for python in self.python:
            if not _is_minor_version(python):
                raise ValueError(f"python entry '{python}' is not a version like '3.12'")

    @property
    def torch_minor(self) -> str:
        """``"2.14"`` for torch 2.14.0: what users pass to ``--torch``."""
        return f"{self.torch.major}.{self.torch.minor}"

    @property
    def torch_spec(self) -> str:
        return f"=={self.torch}"

    @property
    def torch_neuronx_spec(self) -> str:
        """The family pin: ``==2.14.3.0.*`` (build suffixes are not published ahead of time)."""
        return f"=={self.torch_neuronx}.*"


@frozen
class PipPackage:
    """A Python package the release pins besides torch and torch-neuronx (neuronx-cc, nki)."""

    role: str
    version: Version | None = None
    spec: SpecifierSet | None = None
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_pin(self.version, self.spec, " such as '==0.7.*' or '>=0.7.0,<0.9'")

    @property
    def requirement_spec(self) -> str:
        return _requirement_spec(self.version, self.spec)


@frozen
class Index:
    """A package index and the packages that must come from it and from nowhere else."""

    url: str
    serves: tuple[str, ...]
    note: str = ""
    sources: tuple[str, ...] = ()


@frozen
class Placeholder:
    """Versions published under a Neuron package name on the default index ("WRONG PACKAGE").

    ``importable`` says whether the wheel's folder is a module name: where it is not, ``import``
    fails with a plain ModuleNotFoundError and the "WRONG PACKAGE" text never shows.
    """

    versions: tuple[Version, ...]
    sha256: str = ""
    importable: bool | None = None
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.sha256 and not re.fullmatch(r"[0-9a-f]{64}", self.sha256):
            raise ValueError("sha256 must be the wheel's full hash: 64 lowercase hex digits")


@frozen
class LegacyXla:
    """The legacy PyTorch/XLA torch-neuronx line, published under the same package name."""

    versions: SpecifierSet
    last: Version
    note: str
    sources: tuple[str, ...] = ()


@frozen
class Claim:
    """What one source says about an OS release; sources can disagree."""

    source: str
    support: SupportStatus | None = None
    wheels: bool | None = None
    note: str = ""


@frozen
class OsRelease:
    """An OS release: its support status and pip-wheel availability, kept as separate facts."""

    name: str
    support: SupportStatus
    wheels: bool
    instead: str = ""
    default_python: str | None = None
    confirmed: bool = True
    note: str = ""
    claims: tuple[Claim, ...] = ()

    def __post_init__(self) -> None:
        if (self.support != "supported" or not self.wheels) and not self.instead:
            raise ValueError(
                "an OS without supported pip wheels needs 'instead': what its users should do"
            )


@frozen
class Chip:
    """A Neuron chip generation."""

    name: str
    neuroncores: int
    neuroncore_version: str
    memory_gib: int
    memory_bandwidth_tbps: float
    peak_tflops: dict[str, float]
    lnc: tuple[int, ...]
    default_lnc: int
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.default_lnc not in self.lnc:
            raise ValueError(f"default-lnc {self.default_lnc} is not one of lnc {list(self.lnc)}")

    def logical_cores(self, lnc: int | None = None) -> int:
        """Logical NeuronCores per chip at a Logical NeuronCore Config (default: the chip's)."""
        return self.neuroncores // (lnc or self.default_lnc)


@frozen
class Family:
    """An instance family (``trn2``) and whether the native backend supports it."""

    native: bool
    chip: str | None = None
    reason: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if not self.native and not self.reason:
            raise ValueError("an unsupported family needs a 'reason'")
        if self.native and self.chip is None:
            raise ValueError("a supported family needs its 'chip'")


INSTANCE_FACTS = (
    "chips",
    "vcpus",
    "memory-gib",
    "network-cards",
    "max-efa",
    "enis-per-card",
    "usage-classes",
)
"""The facts of an instance type that need a source (``family`` is the matrix's own grouping)."""


@frozen
class InstanceType:
    """An EC2 instance type, with what launch templates and checks need to know about it."""

    family: str
    chips: int
    vcpus: int
    memory_gib: int
    network_cards: int
    max_efa: int
    enis_per_card: int
    usage_classes: tuple[UsageClass, ...]
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()
    cites: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Per fact (``max-efa``), the sources that hold its value: an entry's ``sources`` may be
    about the type in general and not hold every number."""
    unconfirmed: tuple[str, ...] = ()
    """Facts no source read holds (shown as unconfirmed), by key."""

    def __post_init__(self) -> None:
        for key in [*self.cites, *self.unconfirmed]:
            if key not in INSTANCE_FACTS:
                raise ValueError(
                    f"'{key}' is not an instance-type fact ({', '.join(INSTANCE_FACTS)})"
                )
        both = sorted(set(self.cites) & set(self.unconfirmed))
        if both:
            raise ValueError(f"'{both[0]}' is both cited and marked unconfirmed")
        # Bounds of real hardware (a trn2.48xlarge has 16 cards): launch templates list one
        # interface per card, so an unbounded count is an unbounded template.
        for key, value, low, high in (
            ("network-cards", self.network_cards, 1, MAX_NETWORK_CARDS),
            ("enis-per-card", self.enis_per_card, 1, MAX_NETWORK_CARDS),
            ("chips", self.chips, 1, MAX_NETWORK_CARDS),
            ("max-efa", self.max_efa, 0, MAX_NETWORK_CARDS * MAX_NETWORK_CARDS),
        ):
            if not low <= value <= high:
                raise ValueError(f"{key} = {value} is outside {low}–{high}")

    def unsourced(self) -> list[str]:
        """The facts that neither cite a source nor are marked unconfirmed (an entry marked
        ``confirmed = false`` marks them all)."""
        if not self.confirmed:
            return []
        return [
            key for key in INSTANCE_FACTS if key not in self.cites and key not in self.unconfirmed
        ]

    def is_confirmed(self, key: str) -> bool:
        """True when the fact ``key`` cites a source that holds it."""
        return self.confirmed and key in self.cites


@frozen
class SystemPackage:
    """An apt package of the release (driver, runtime, collectives, tools)."""

    role: SystemRole
    version: Version | None = None
    required: bool = True
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.version is None and self.confirmed:
            raise ValueError("a package without a 'version' must say confirmed = false and why")


@frozen
class AptRepo:
    """The Neuron apt repository: its URL, signing key and keyring path, and the sources that
    say so."""

    url: str
    key_url: str
    keyring: str
    sources: tuple[str, ...] = ()


@frozen
class Dlami:
    """A Neuron Deep Learning AMI for one OS, and the public SSM parameter that resolves to it."""

    name: str
    kind: DlamiKind
    os: str
    ssm_parameter: str
    torch: Version | None = None
    venv: str | None = None
    confirmed: bool = True
    ssm_confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()


@frozen
class Limitation:
    """A known limitation of the release's native backend."""

    id: str
    kind: LimitationKind
    summary: str
    apis: tuple[str, ...] = ()
    confirmed: bool = True
    note: str = ""
    """What a later source narrows or adds, without dropping the limitation."""
    sources: tuple[str, ...] = ()


@frozen
class KnownIssue:
    """A public bug in a package the release ships, and the later release that fixes it.

    ``affects`` lists the package's release lines that carry the bug (``2.14.3.0`` covers the
    build ``2.14.3.0.2187``); ``fixed-by`` the versions that fix it, one for each affected line
    with the same first two numbers (torch-neuronx 2.14.3.0 is fixed by 2.14.3.1: the user's own
    PyTorch family); ``fixed-in`` the Neuron release that ships them.
    """

    id: str
    summary: str
    package: str
    affects: tuple[Version, ...]
    fixed_in: Version
    fixed_by: tuple[Version, ...]
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.affects or not self.fixed_by:
            raise ValueError("a known issue needs the versions it 'affects' and those 'fixed-by'")
        if not self.sources:
            raise ValueError("a known issue needs 'sources' that say so")
        for line in self.affects:
            fix = self.fix_for(line)
            if fix is None:
                raise ValueError(
                    f"no 'fixed-by' version for the affected line {line} (one with the same "
                    f"first two numbers, {line.major}.{line.minor})"
                )
            if fix <= line or _on_line(fix, line):
                raise ValueError(f"fixed-by {fix} is not newer than the affected line {line}")

    def affected(self, installed: Version) -> bool:
        """True when ``installed`` (2.14.3.0.2187) is on one of the affected lines."""
        return any(_on_line(installed, line) for line in self.affects)

    def fix_for(self, installed: Version) -> Version | None:
        """The fixing version for ``installed``'s family (same first two numbers)."""
        return next((v for v in self.fixed_by if v.release[:2] == installed.release[:2]), None)


def _on_line(version: Version, line: Version) -> bool:
    return version.release[: len(line.release)] == line.release


@frozen
class Companion:
    """A package of the Neuron index that rides on TorchNeuron (TorchTitan Neuron, TorchAO Neuron).

    Keyed by its pip name. Never installed unless asked for; when it is, it comes from ``index``
    only, at the release's version, and only for the listed PyTorch minors and instance families.
    ``confirmed`` is about the version as this release's, ``families-confirmed`` about the
    families (a source that names none leaves TorchNeuron's assumed).
    """

    name: str
    torch: tuple[str, ...]
    families: tuple[str, ...]
    index: str
    version: Version | None = None
    spec: SpecifierSet | None = None
    import_name: str = ""
    """The import package, when it is not the pip name's (torchao-neuron imports as torchao)."""
    conflicts: tuple[str, ...] = ()
    """Distributions that cannot share its environment (upstream torchao: same import name)."""
    confirmed: bool = True
    families_confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_pin(self.version, self.spec)
        if not self.torch or not self.families:
            raise ValueError(
                "a companion needs the PyTorch minors ('torch') and 'families' it runs on"
            )
        for minor in self.torch:
            if not _is_minor_version(minor):
                raise ValueError(f"torch entry '{minor}' is not a PyTorch minor like '2.14'")

    @property
    def requirement_spec(self) -> str:
        return _requirement_spec(self.version, self.spec)


@frozen
class XlaPin:
    """A version of a library and the XLA build of torch-neuronx it pins."""

    version: str
    """The library's version, or the branch that pins it (``"0.4.5"``, ``"sdk2.31 branch"``)."""
    torch_neuronx: Version
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()


@frozen
class Library:
    """A library around TorchNeuron: which line it runs on, its support, what it pins.

    Keyed by its pip name. ``line`` is ``xla`` for the libraries built on the PyTorch/XLA build
    of torch-neuronx (installing one into a TorchNeuron environment pulls that build in) and
    ``native`` for those that run on TorchNeuron's neuron device as they are. ``summary`` is the
    support status with its dates, ``advice`` what to do in a TorchNeuron environment; doctor
    and scan both say these words, so they never disagree about a library.
    """

    name: str
    line: LibraryLine
    status: LibraryStatus
    summary: str
    advice: str = ""
    end_of_support: datetime.date | None = None
    imports: tuple[str, ...] = ()
    """Import packages (``optimum.neuron``): what scan finds in source code."""
    commands: tuple[str, ...] = ()
    """Commands it installs that build for the XLA line (``optimum-cli export neuron``)."""
    pins: tuple[XlaPin, ...] = ()
    confirmed: bool = True
    note: str = ""
    sources: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.line == "native" and self.pins:
            raise ValueError("a library on the native line pins no XLA torch-neuronx")

    @property
    def pinned(self) -> str:
        """``2.8.0.2.10.16998 (0.4.5), 2.9.0.2.15.32035 (sdk2.31 branch)``, or ``""``."""
        return ", ".join(
            f"{pin.torch_neuronx} ({pin.version}{'' if pin.confirmed else ', unconfirmed'})"
            for pin in self.pins
        )

    def statement(self) -> str:
        """What doctor and scan both say about this library: its line, status and pins."""
        pins = f" The XLA torch-neuronx it pins: {self.pinned}." if self.pins else ""
        unconfirmed = "" if self.confirmed else " (unconfirmed)"
        return f"{self.summary}{unconfirmed}{pins}"


@frozen
class Release:
    """Everything one matrix file says about one Neuron SDK release."""

    schema: int
    release: ReleaseInfo
    pairings: tuple[Pairing, ...]
    packages: dict[str, PipPackage]
    indexes: dict[str, Index]
    placeholders: dict[str, Placeholder]
    legacy_xla: LegacyXla
    os: dict[str, OsRelease]
    chips: dict[str, Chip]
    families: dict[str, Family]
    instance_types: dict[str, InstanceType]
    system_packages: dict[str, SystemPackage]
    apt: AptRepo
    dlamis: tuple[Dlami, ...]
    limitations: tuple[Limitation, ...]
    docs: dict[str, str]
    sources: dict[str, str]
    companions: dict[str, Companion] = field(default_factory=dict)
    libraries: dict[str, Library] = field(default_factory=dict)
    known_issues: tuple[KnownIssue, ...] = ()
    origin: Path = field(default=Path(), metadata={NOT_IN_TOML: True}, compare=False)

    @property
    def version(self) -> Version:
        return self.release.version

    def pairing_for(self, torch_minor: str) -> Pairing | None:
        return next((p for p in self.pairings if p.torch_minor == torch_minor), None)

    def index_for(self, package: str) -> str | None:
        """The name of the index ``package`` must come from, or None for the default index."""
        return next((name for name, ix in self.indexes.items() if package in ix.serves), None)

    def companions_for(self, torch_minor: str) -> dict[str, Companion]:
        """The companions that run on PyTorch ``torch_minor`` (``"2.14"``), by pip name."""
        return {name: c for name, c in self.companions.items() if torch_minor in c.torch}

    def xla_library(self, pip_name: str) -> Library | None:
        """The library of this pip name when it runs on the XLA line only."""
        library = self.libraries.get(pip_name)
        return library if library is not None and library.line == "xla" else None

    def family_of(self, instance_type: str) -> str:
        """``trn2`` for ``trn2.48xlarge``; listed types may name another family (``trn2u``)."""
        known = self.instance_types.get(instance_type)
        return known.family if known else instance_type.split(".", 1)[0]


def _check_pin(version: Version | None, spec: SpecifierSet | None, such_as: str = "") -> None:
    """A package the matrix pins gives exactly one of an exact version or a bounded range: an
    open range admits any impostor a default index offers (nki 99.0)."""
    if (version is None) == (spec is None):
        raise ValueError("give exactly one of 'version' (an exact pin) or 'spec' (a range)")
    if spec is not None and not is_bounded(spec):
        raise ValueError(
            f"spec '{spec}' has no upper bound, so any newer version (an impostor "
            "from another index included) would pass: give an exact 'version' or a bounded "
            f"'spec'{such_as}"
        )


def _requirement_spec(version: Version | None, spec: SpecifierSet | None) -> str:
    """The pip specifier of a pin: ``==version`` or the range."""
    return f"=={version}" if version is not None else str(spec)


def is_bounded(spec: SpecifierSet) -> bool:
    """True when ``spec`` caps the version: an exact or wildcard pin, ``<``, ``<=`` or ``~=``."""
    return any(s.operator in ("==", "===", "<", "<=", "~=") for s in spec)


def _is_minor_version(text: str) -> bool:
    parts = text.split(".")
    return len(parts) == 2 and all(p.isascii() and p.isdigit() for p in parts)
