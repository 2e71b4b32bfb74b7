"""The install plan: every pin, the only index it may come from, and what the install will do.

A pure function of the resolved :class:`~neuron_env.matrix.Target`, its release and the user's
choices. Nothing here touches the network, the filesystem or a subprocess: ``--dry-run`` prints
exactly this, and the executors (:mod:`neuron_env.install.backends`) only carry it out.

Routing rule: every package the release routes (torch-neuronx, neuronx-cc and nki to the Neuron
index, torch to the PyTorch CPU index) comes from its index and from nowhere else; any other
Neuron name (:mod:`neuron_env.matrix.names`), a dependency included, comes from the Neuron index
or not at all; everything else comes from the default index (the backend's own configuration
unless ``--index-url`` names one).
"""

from __future__ import annotations

import shlex
from collections.abc import Iterable
from dataclasses import field, replace
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.matrix import Note, Release, Target
from neuron_env.matrix.names import is_neuron_name, release_neuron_names

BackendName = Literal["uv", "pip"]
Action = Literal["create", "upgrade"]

DEFAULT_ROUTE = "default"
WHEELHOUSE_ROUTE = "wheelhouse"
#: What to do when a Neuron package would come from an index that does not route it.
MISROUTED_HINT = (
    "Check the Neuron index (--neuron-index), or add the package to the release's "
    "[packages] and [indexes] in a matrix file (--matrix-dir)."
)


@frozen
class IndexRoute:
    """A package source and the packages that must come from it alone.

    ``url`` is None for the default index when the backend's configuration decides it.
    ``origin`` says where the URL came from (the matrix, an option, the backend).
    """

    name: str
    url: str | None
    origin: str
    serves: tuple[str, ...] = ()


@frozen
class PlannedPackage:
    """One pinned package, the route it comes from, and its version in the target today."""

    name: str
    spec: str
    route: str
    confirmed: bool = True
    note: str = ""
    installed: str | None = None
    requested: str = ""
    """The user's requirements for it as written, and where (empty: a pin of the matrix)."""
    extras: str = ""
    """The extras the user asked for, e.g. ``[torch]`` (user packages only)."""
    hashes: tuple[str, ...] = ()
    """The sha256 digests a lock (``-r`` with ``--hash``) allows for it; empty: no lock."""

    @property
    def requirement(self) -> str:
        return f"{self.name}{self.extras}{self.spec}"

    def allows(self, version: str) -> bool:
        """Whether ``version`` satisfies the pin (``2.14.0+cpu`` satisfies ``==2.14.0``)."""
        return SpecifierSet(self.spec).contains(version, prereleases=True)


@frozen
class Guards:
    """What must never end up installed, from the release's facts.

    ``placeholders``: the "WRONG PACKAGE" versions published under Neuron names on the default
    index. ``legacy_xla``: the version range of the legacy XLA torch-neuronx line.
    ``neuron_names``: the release's Neuron names the plan does not pin (routed, placeholders,
    companions); no install may add one from any index but the Neuron one.
    """

    placeholders: dict[str, tuple[str, ...]]
    legacy_xla: str
    neuron_names: tuple[str, ...]

    def is_neuron(self, name: str) -> bool:
        """The matrix's one Neuron-name rule, with this release's names."""
        return is_neuron_name(name, self.neuron_names)


@frozen
class Mirrors:
    """The user's mirrors of the indexes (None: the index itself; for ``index_url``, the default
    index of the backend's configuration)."""

    index_url: str | None = None
    neuron_index: str | None = None
    pytorch_index: str | None = None

    def given(self) -> dict[str, str]:
        """The mirrors the user gave, by flag (``{"--neuron-index": URL}``), in the flags' order."""
        flags = {
            "--index-url": self.index_url,
            "--neuron-index": self.neuron_index,
            "--pytorch-index": self.pytorch_index,
        }
        return {flag: url for flag, url in flags.items() if url is not None}


@frozen
class Choices:
    """What the user asked for beyond the matrix request, and what neuron-env found out."""

    venv: str
    action: Action
    base_python: str
    backend: BackendName
    installed: dict[str, str]
    mirrors: Mirrors = field(default_factory=Mirrors)
    wheelhouse: str | None = None
    offline: bool = False
    default_index_origin: str = "backend"


@frozen
class InstallPlan:
    """Everything ``neuron-env install`` will do, as plain data (``--dry-run`` prints it)."""

    release: str
    release_status: str
    torch: str
    torch_neuronx: str
    python: str
    os: str | None
    arch: str | None
    venv: str
    action: Action
    base_python: str
    backend: BackendName
    packages: tuple[PlannedPackage, ...]
    routes: tuple[IndexRoute, ...]
    wheelhouse: str | None
    offline: bool
    guards: Guards
    notes: tuple[Note, ...]
    remove: tuple[str, ...] = ()
    lock: str | None = None
    """The requirements file whose ``--hash`` pins the plan follows (an exported lock), if one."""

    def route(self, name: str) -> IndexRoute:
        return next(r for r in self.routes if r.name == name)

    def package(self, name: str) -> PlannedPackage:
        return next(p for p in self.packages if p.name == name)

    def packages_from(self, route: str) -> tuple[PlannedPackage, ...]:
        return tuple(p for p in self.packages if p.route == route)

    @property
    def routed(self) -> tuple[IndexRoute, ...]:
        """The routes that serve pinned packages (not the default index)."""
        return tuple(r for r in self.routes if r.serves)

    @property
    def default_route(self) -> IndexRoute:
        return self.route(DEFAULT_ROUTE)

    @property
    def requirements(self) -> tuple[str, ...]:
        return tuple(p.requirement for p in self.packages)

    @property
    def neuron_route(self) -> IndexRoute | None:
        """The route torch-neuronx comes from: every Neuron name must come from it alone."""
        pinned = next((p for p in self.packages if p.name == "torch-neuronx"), None)
        route = next((r for r in self.routed if pinned and r.name == pinned.route), None)
        return route if route is not None and route.url else None

    def required_route(self, name: str) -> IndexRoute | None:
        """The only route ``name`` may come from: its pin's, the Neuron one for any Neuron name."""
        name = canonicalize_name(name)
        pinned = next((p for p in self.packages if p.name == name), None)
        if pinned is not None and pinned.route not in (DEFAULT_ROUTE, WHEELHOUSE_ROUTE):
            return self.route(pinned.route)
        if self.guards.is_neuron(name):
            return self.neuron_route
        return None


def make_plan(release: Release, target: Target, choices: Choices) -> InstallPlan:
    """Turn a resolved target into an install plan, applying the index overrides."""
    if target.python is None:
        raise ValueError("an install plan needs the target's Python version")
    routes = _routes(target, choices)
    route_of = {name: r.name for r in routes for name in r.serves}
    remove = legacy_leftovers(choices.installed, str(release.legacy_xla.versions))
    packages = tuple(
        PlannedPackage(
            name=pin.name,
            spec=pin.spec,
            route=WHEELHOUSE_ROUTE if choices.wheelhouse else route_of.get(pin.name, DEFAULT_ROUTE),
            confirmed=pin.confirmed,
            note=pin.note,
            installed=choices.installed.get(pin.name),
        )
        for pin in target.pins
    )
    return InstallPlan(
        release=target.release,
        release_status=target.release_status,
        torch=target.torch,
        torch_neuronx=target.torch_neuronx,
        python=target.python,
        os=target.os,
        arch=target.arch,
        venv=choices.venv,
        action=choices.action,
        base_python=choices.base_python,
        backend=choices.backend,
        packages=packages,
        routes=routes,
        wheelhouse=choices.wheelhouse,
        offline=choices.offline,
        guards=guards_for(release, target),
        notes=target.notes + tuple(_plan_notes(choices)) + tuple(_legacy_notes(remove, choices)),
        remove=remove,
    )


#: What the legacy PyTorch/XLA line of torch-neuronx brings along; TorchNeuron replaces all of it.
LEGACY_XLA_STACK = ("torch-xla", "libneuronxla", "transformers-neuronx")
LEGACY_XLA_FAMILIES = ("neuronx-distributed",)  # -training, -inference


def legacy_leftovers(installed: dict[str, str], legacy_range: str) -> tuple[str, ...]:
    """The legacy XLA stack in an environment being upgraded: all of it must go.

    An environment is a legacy one when its torch-neuronx is a legacy XLA build, or when
    torch-xla or libneuronxla (which only that line uses) is still there.
    """
    stack = tuple(
        name
        for name in sorted(installed)
        if name in LEGACY_XLA_STACK or name.startswith(LEGACY_XLA_FAMILIES)
    )
    xla_only = {"torch-xla", "libneuronxla"} & set(stack)
    return stack if xla_only or _is_legacy(installed.get("torch-neuronx"), legacy_range) else ()


def _is_legacy(version: str | None, legacy_range: str) -> bool:
    if version is None:
        return False
    try:
        return SpecifierSet(legacy_range).contains(version, prereleases=True)
    except InvalidVersion:
        return False


def _legacy_notes(remove: tuple[str, ...], choices: Choices) -> Iterable[Note]:
    if remove:
        found = ", ".join(f"{name} {choices.installed[name]}" for name in remove)
        yield Note(
            "warning",
            "install.remove-legacy",
            f"{choices.venv} holds the legacy PyTorch/XLA stack ({found}): the install removes "
            "it, since TorchNeuron replaces it and cannot share an environment with it.",
        )


def guards_for(release: Release, target: Target) -> Guards:
    """The release's placeholders, legacy range and Neuron names, for verification."""
    pinned = {p.name for p in target.pins}
    return Guards(
        placeholders={
            name: tuple(str(v) for v in ph.versions) for name, ph in release.placeholders.items()
        },
        legacy_xla=str(release.legacy_xla.versions),
        neuron_names=tuple(sorted(release_neuron_names(release) - pinned)),
    )


def _routes(target: Target, choices: Choices) -> tuple[IndexRoute, ...]:
    if choices.wheelhouse:
        return (IndexRoute(WHEELHOUSE_ROUTE, choices.wheelhouse, "--wheelhouse", _names(target)),)
    mirrors = choices.mirrors
    overrides = {"torch-neuronx": mirrors.neuron_index, "torch": mirrors.pytorch_index}
    flags = {"torch-neuronx": "--neuron-index", "torch": "--pytorch-index"}
    routes: dict[str, IndexRoute] = {}
    for pin in target.pins:
        if pin.index is None or pin.index_url is None:
            continue
        route = routes.get(pin.index) or IndexRoute(pin.index, pin.index_url, "matrix")
        if overrides.get(pin.name):
            url = _check_url(str(overrides[pin.name]), flags[pin.name])
            route = replace(route, url=url, origin=flags[pin.name])
        routes[pin.index] = replace(route, serves=(*route.serves, pin.name))
    default_url = _check_url(mirrors.index_url, "--index-url") if mirrors.index_url else None
    origin = "--index-url" if default_url else choices.default_index_origin
    return (*routes.values(), IndexRoute(DEFAULT_ROUTE, default_url, origin))


def _names(target: Target) -> tuple[str, ...]:
    return tuple(p.name for p in target.pins)


def _check_url(url: str, flag: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https", "file") or not (parts.netloc or parts.path):
        raise BadInput(
            f"{flag} '{url}' is not an index URL.",
            hint=f"Give the URL of a PEP 503 simple index, e.g. {flag} https://mirror.example/simple",
        )
    return url.rstrip("/")


def _plan_notes(choices: Choices) -> Iterable[Note]:
    if choices.action == "upgrade":
        yield Note(
            "info",
            "install.upgrade",
            f"{choices.venv} is copied beside itself, upgraded and verified there; it is replaced "
            "only when the copy verifies, and left as it is otherwise.",
        )
    if choices.backend == "uv" and choices.action == "create":
        # The venv's own interpreter, by its path: a bare python is another one, or none.
        python = str(Path(choices.venv).absolute() / "bin" / "python")
        yield Note(
            "info",
            "install.uv-no-pip",
            "uv creates the venv without pip; add it later with "
            f"'{shlex.join([python, '-m', 'ensurepip'])}' if needed.",
        )
    if choices.wheelhouse:
        yield Note(
            "info",
            "install.wheelhouse",
            f"Every package comes from the wheelhouse {choices.wheelhouse}; no index is used.",
        )
