"""Wheelhouses: every wheel of a plan in one directory, with a manifest of hashes.

:func:`fill_wheelhouse` downloads with pip in routed phases: each routed index gives only its own
pinned packages (``--no-deps``, that index alone, the user's extra indexes and find-links
overridden), then the dependencies come from the default index with the routed wheels given as
files, so no routed name can be taken from anywhere else. A Neuron name that appears among the
dependencies is refused. The manifest (``neuron-env-wheelhouse.json``) and a hash-pinned
``requirements.txt`` describe the result; installing from it (``--no-index --require-hashes``)
accepts exactly those files.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
from collections.abc import Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.utils import InvalidWheelFilename, canonicalize_name, parse_wheel_filename
from packaging.version import InvalidVersion

from neuron_env.errors import BadInput, CommandFailed, MalformedFile, OperationFailed
from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, Limits, load_json
from neuron_env.install.plan import DEFAULT_ROUTE, MISROUTED_HINT, InstallPlan
from neuron_env.invocation import command
from neuron_env.schema import JSON_LENIENT, SchemaError, parse
from neuron_env.serialize import envelope

if TYPE_CHECKING:
    # Not at run time: the backends package imports this module, so importing wheelhouse first
    # (the renderers, download) would re-enter it half-initialised.
    from neuron_env.install.backends.base import Session

MANIFEST = "neuron-env-wheelhouse.json"
REQUIREMENTS = "requirements.txt"
MANIFEST_COMMAND = "wheelhouse"
ONLY_BINARY = "--only-binary=:all:"
# A manifest lists a few hundred wheels at most: 16 MiB, names and hashes of normal length.
MANIFEST_LIMITS = Limits(max_bytes=16 << 20, max_string=4096, max_depth=16)


@frozen
class WheelFile:
    """One wheel: its project, version, file name, sha256, and the route it came from."""

    name: str
    version: str
    file: str
    sha256: str
    route: str
    index_url: str | None = None


@frozen
class Wheelhouse:
    """What a wheelhouse holds and what it was made for."""

    release: str
    torch: str
    python: str
    platforms: tuple[str, ...]
    files: tuple[WheelFile, ...] = field(default_factory=tuple)


@frozen
class ForeignTags:
    """Download for another machine: its Python version and platform tags."""

    python: str
    platforms: tuple[str, ...]

    def pip_options(self) -> list[str]:
        options = ["--python-version", self.python, "--implementation", "cp"]
        for platform in self.platforms:
            options += ["--platform", platform]
        return options


def manylinux_platforms(arch: str, min_glibc: str | None) -> tuple[str, ...]:
    """The manylinux tags a Linux ``arch`` host with glibc >= ``min_glibc`` can install."""
    newest = int((min_glibc or "2.35").split(".")[1])
    tags = [f"manylinux_2_{minor}_{arch}" for minor in range(newest, 16, -1)]
    return (*tags, f"manylinux2014_{arch}", f"linux_{arch}")


def fill_wheelhouse(
    plan: InstallPlan,
    dest: Path,
    pip: Sequence[str | os.PathLike[str]],
    session: Session,
    tags: ForeignTags | None = None,
) -> Wheelhouse:
    """Download every wheel of ``plan`` into the empty directory ``dest``, routed.

    A Neuron name among the dependencies is fetched from the Neuron index instead (and the
    dependencies downloaded again with it); when that index does not have it, the wheelhouse is
    refused: nothing from the default index may stand in for a Neuron package.
    """
    extra = tags.pip_options() if tags else []
    routed: list[WheelFile] = []
    for route in plan.routed:
        pins = [p.requirement for p in plan.packages_from(route.name)]
        routed += _download_routed(plan, route.name, pins, dest, pip, session, extra)
    deps = _download_dependencies(plan, routed, dest, pip, session, extra)
    foreign = _foreign(plan, deps)
    neuron = plan.neuron_route
    if foreign and neuron is not None:
        for wheel in deps:
            (dest / wheel.file).unlink()
        names = [w.name for w in foreign]
        try:
            routed += _download_routed(plan, neuron.name, names, dest, pip, session, extra)
        except CommandFailed:
            raise _foreign_error(foreign) from None
        deps = _download_dependencies(plan, routed, dest, pip, session, extra)
        foreign = _foreign(plan, deps)
    if foreign:
        raise _foreign_error(foreign)
    platforms = tags.platforms if tags else ()
    house = Wheelhouse(plan.release, plan.torch, plan.python, platforms, tuple(routed + deps))
    write_manifest(dest, house)
    return house


def _download_routed(
    plan: InstallPlan,
    route_name: str,
    requirements: list[str],
    dest: Path,
    pip: Sequence[str | os.PathLike[str]],
    session: Session,
    extra: list[str],
) -> list[WheelFile]:
    route = plan.route(route_name)
    assert route.url is not None
    scratch = session.work / f"routed-{route.name}"
    empty = session.work / "no-find-links"
    scratch.mkdir(parents=True, exist_ok=True)
    empty.mkdir(exist_ok=True)
    argv = [*pip, "download", "--no-deps", ONLY_BINARY, "--dest", scratch, "--index-url", route.url]
    session.run([*argv, *extra, *requirements], env=session.env(_only_index(route.url, empty)))
    files = []
    for wheel in sorted(scratch.glob("*.whl")):
        shutil.move(wheel, dest / wheel.name)
        files.append(_wheel_file(dest / wheel.name, route.name, route.url))
    return files


def _only_index(url: str, empty_dir: Path) -> dict[str, str]:
    """Override the user's extra indexes and find-links (pip ignores empty values, not these)."""
    return {"PIP_EXTRA_INDEX_URL": url, "PIP_FIND_LINKS": str(empty_dir), "PIP_NO_INDEX": "0"}


def _download_dependencies(
    plan: InstallPlan,
    routed: list[WheelFile],
    dest: Path,
    pip: Sequence[str | os.PathLike[str]],
    session: Session,
    extra: list[str],
) -> list[WheelFile]:
    """The dependencies of the routed wheels, from the default index; returns the new files."""
    before = {p.name for p in dest.glob("*.whl")}
    argv: list[str | os.PathLike[str]] = [*pip, "download", ONLY_BINARY, "--dest", dest]
    env = None
    if plan.default_route.url:  # the mirror is the only default source: no extra index, links
        argv += ["--index-url", plan.default_route.url]
        empty = session.work / "no-find-links"
        empty.mkdir(exist_ok=True)
        env = session.env(_only_index(plan.default_route.url, empty))
    argv += _user_arguments(plan, session)
    session.run([*argv, *extra, *(dest / w.file for w in routed)], env=env)
    new = sorted(p for p in dest.glob("*.whl") if p.name not in before)
    return [_wheel_file(p, DEFAULT_ROUTE, plan.default_route.url) for p in new]


def _user_arguments(plan: InstallPlan, session: Session) -> list[str | os.PathLike[str]]:
    """The user's default-index packages, and the core pins as constraints (none: nothing)."""
    from neuron_env.install.user_packages import user_requirements_from, write_constraints

    constraints = write_constraints(plan, session.work / "constraints")
    if constraints is None:
        return []
    return ["-c", constraints, *user_requirements_from(plan, DEFAULT_ROUTE)]


def _foreign(plan: InstallPlan, deps: list[WheelFile]) -> list[WheelFile]:
    """Dependencies taken from the default index that must come from a routed index."""
    return [w for w in deps if plan.required_route(w.name) is not None]


def _foreign_error(foreign: list[WheelFile]) -> OperationFailed:
    names = ", ".join(f"{w.name} {w.version}" for w in foreign)
    return OperationFailed(
        f"The dependencies would take {names} from the default index, which does not route "
        "Neuron packages, and the Neuron index does not offer it; it may be an impostor.",
        hint=MISROUTED_HINT,
    )


def _wheel_file(path: Path, route: str, index_url: str | None) -> WheelFile:
    try:
        name, version, _, _ = parse_wheel_filename(path.name)
    except InvalidWheelFilename as exc:
        raise OperationFailed(f"{path.name} is not a wheel file name: {exc}") from None
    return WheelFile(str(name), str(version), path.name, sha256_of(path), route, index_url)


def sha256_of(path: Path) -> str:
    """The file's sha256; opened without blocking, so a FIFO is refused instead of waited on."""
    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OperationFailed(f"Wheelhouse file {path.name} is not a regular file.")
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


# --- manifest and requirements ------------------------------------------------------------------


def write_manifest(dest: Path, house: Wheelhouse) -> None:
    doc = envelope(MANIFEST_COMMAND, {"wheelhouse": house})
    (dest / MANIFEST).write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    (dest / REQUIREMENTS).write_text(hashed_requirements(house), encoding="utf-8")


def hashed_requirements(house: Wheelhouse, header: Sequence[str] = ()) -> str:
    """A requirements file pinning every wheel by version and sha256 (for ``--require-hashes``)."""
    lines = [
        f"# Neuron {house.release} · PyTorch {house.torch} · Python {house.python}",
        "# Each line pins one file by its sha256: pip and uv refuse anything else.",
        *header,
        "",
    ]
    for wheel in sorted(house.files, key=lambda w: w.name):
        source = f"{wheel.route} ({wheel.index_url})" if wheel.index_url else wheel.route
        lines += [f"# from {source}", f"{wheel.name}=={wheel.version} \\"]
        lines.append(f"    --hash=sha256:{wheel.sha256}")
    return "\n".join(lines) + "\n"


def download_command(plan: InstallPlan, dest: str, *packages: str) -> str:
    """The ``download`` that fills a wheelhouse for ``plan``'s target (and ``packages``) into
    ``dest``, as pasted on a connected machine (``--os`` too: it may run another OS)."""
    where = ("--os", plan.os) if plan.os else ()
    return command(
        "download", "--torch", plan.torch, "--release", plan.release,
        "--python-version", plan.python, *where, "-d", dest, *packages,
    )  # fmt: skip


def fill_new(plan: InstallPlan, *packages: str) -> str:
    """The hint that fills a new wheelhouse for ``plan``'s target: download refuses a folder
    that holds files, so the folder is the user's to choose."""
    fill = download_command(plan, "DIR", *packages)
    return (
        f"Fill a new one on a connected machine with '{fill}', with a "
        "new folder in place of DIR, and copy that folder here."
    )


def read_wheelhouse(directory: Path, plan: InstallPlan) -> Wheelhouse | None:
    """The manifest of ``directory``, or None for a plain directory of wheels (``plan``: the
    target it is for, for the hints that fill it).

    The manifest is read bounded (a FIFO, a device or a huge file is refused without blocking,
    nesting is limited), so a hostile one is bad input, never a hang or a crash.
    """
    if not directory.is_dir():
        raise BadInput(f"Wheelhouse {directory} does not exist or is not a directory.")
    path = directory / MANIFEST
    if not os.path.lexists(path):
        dest = directory.absolute()  # empty: download fills it as it is
        if not any(directory.glob("*.whl")):
            raise BadInput(
                f"Wheelhouse {directory} is empty: it holds no {MANIFEST} and no wheel, so there "
                "is nothing to install. Nothing was created.",
                hint=f"Fill it on a connected machine with '{download_command(plan, str(dest))}', "
                "then copy the whole directory here.",
            )
        return None
    try:
        doc: Any = load_json(path, MANIFEST_LIMITS)
        return parse(Wheelhouse, doc["wheelhouse"], ["wheelhouse"], JSON_LENIENT)
    except (InputRejected, KeyError, TypeError, SchemaError) as exc:
        why = exc.problem if isinstance(exc, InputRejected) else str(exc)
        raise MalformedFile(
            f"{path} is not a neuron-env wheelhouse manifest ({why}).",
            hint=fill_new(plan),
        ) from None


def check_wheelhouse(
    directory: Path, house: Wheelhouse, plan: InstallPlan, routed: InstallPlan
) -> None:
    """Refuse a wheelhouse made for another target, one whose manifest says a package came from
    another index than the matrix routes it to (``routed``: the plan as if online), one whose
    files lie outside it, or one whose files changed."""
    made_for = (house.release, house.torch, house.python)
    wanted = (plan.release, plan.torch, plan.python)
    if made_for != wanted:
        raise BadInput(
            f"Wheelhouse {directory} was made for Neuron {house.release}, PyTorch {house.torch}, "
            f"Python {house.python}; this install needs Neuron {plan.release}, PyTorch "
            f"{plan.torch}, Python {plan.python}.",
            hint=fill_new(plan),
        )
    for wheel in house.files:
        _check_route(directory, wheel, routed)
        _check_file(_confined(directory, wheel, plan), wheel, plan)


def _check_route(directory: Path, wheel: WheelFile, routed: InstallPlan) -> None:
    """The manifest's word on where a wheel came from must be the matrix's word."""
    required = routed.required_route(wheel.name)
    expected = required.name if required is not None else DEFAULT_ROUTE
    if wheel.route == expected:
        return
    said = f"the index '{wheel.route}'" + (f" ({wheel.index_url})" if wheel.index_url else "")
    url = required.url if required is not None else routed.default_route.url
    wants = f"the index '{expected}'" + (f" ({url})" if url else "")
    raise BadInput(
        f"Wheelhouse {directory}: its manifest says {wheel.name} {wheel.version} came from "
        f"{said}, but Neuron {routed.release} routes {wheel.name} to {wants}. Nothing was "
        "installed.",
        hint=f"{fill_new(routed)} It routes every package.",
    )


def _confined(directory: Path, wheel: WheelFile, plan: InstallPlan) -> Path:
    """The wheel's file, which must be a wheel of that name and version inside ``directory``."""
    path = directory / wheel.file
    inside = Path(wheel.file).name == wheel.file and wheel.file not in ("", ".", "..")
    if inside and path.resolve().parent != directory.resolve():  # a link leading elsewhere
        inside = False
    if not inside:
        raise BadInput(
            f"Wheelhouse {directory}: its manifest names the file {wheel.file!r} for "
            f"{wheel.name}, which is not a file inside the wheelhouse; nothing was read from it.",
            hint=fill_new(plan),
        )
    if _wheel_identity(wheel.file) != (canonicalize_name(wheel.name), wheel.version):
        raise BadInput(
            f"Wheelhouse {directory}: its manifest names the file {wheel.file} for "
            f"{wheel.name} {wheel.version}, which is not a wheel of that name and version.",
            hint=fill_new(plan),
        )
    return path


def _wheel_identity(file: str) -> tuple[str, str] | None:
    try:
        name, version, _, _ = parse_wheel_filename(file)
    except (InvalidWheelFilename, InvalidVersion):
        return None
    return str(name), str(version)


def _check_file(path: Path, wheel: WheelFile, plan: InstallPlan) -> None:
    if not path.exists():
        raise OperationFailed(
            f"Wheelhouse file {path.name} is missing.",
            hint=f"Copy the whole wheelhouse directory again. Or: {fill_new(plan)}",
        )
    if sha256_of(path) != wheel.sha256:
        raise OperationFailed(
            f"Wheelhouse file {path.name} does not match its sha256 in the manifest: it is "
            "corrupt or was changed. Nothing was installed.",
            hint=f"Copy the wheelhouse again. Or: {fill_new(plan)}",
        )


def wheelhouse_requirements(directory: Path, work: Path, plan: InstallPlan) -> Path | None:
    """The hash-pinned requirements to install ``directory`` with, written under ``work`` from
    its manifest (the file that was checked), never its own ``requirements.txt`` (which nothing
    checks); None for a plain directory of wheels."""
    house = read_wheelhouse(directory, plan)
    if house is None:
        return None
    path = work / "wheelhouse-requirements.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(hashed_requirements(house), encoding="utf-8")
    return path
