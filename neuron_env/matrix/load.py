"""Finding, reading and validating matrix files.

A matrix file describes one release and is named after it (``2.33.0.toml``). The shipped files come
from :func:`neuron_env.resources.shipped_matrix_dir`; files in user directories
(``--matrix-dir``, ``$NEURON_ENV_MATRIX_DIR``) add newer releases or replace a shipped one.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_env.errors import MatrixError, UnknownRelease
from neuron_env.frozen import frozen
from neuron_env.input_files import (
    MATRIX_LIMITS,
    TOML_LIMITS,
    InputRejected,
    Limits,
    Unreadable,
    load_toml,
    read_bytes,
    refuse_control_characters,
)
from neuron_env.matrix.model import SCHEMA_VERSION, Release
from neuron_env.matrix.parsed import Lookup, parsed_ahead
from neuron_env.resources import shipped_matrix_dir, user_matrix_dirs
from neuron_env.schema import SchemaError, parse, toml_key

T = TypeVar("T")

#: Pinned packages that must each be routed to exactly one index.
ROUTED_PACKAGES = ("torch", "torch-neuronx")


@frozen
class Matrix:
    """All known releases, oldest first."""

    releases: tuple[Release, ...]

    def versions(self) -> list[str]:
        return [str(r.version) for r in self.releases]

    def latest(self) -> Release:
        return self.releases[-1]

    def get(self, version: str | None) -> Release:
        """The release ``version``, or the latest when ``version`` is None."""
        if version is None:
            return self.latest()
        for release in self.releases:
            if str(release.version) == version:
                return release
        raise UnknownRelease(
            f"No matrix file describes Neuron release '{version}'. "
            f"Known releases: {', '.join(self.versions())}.",
            # A sentence, not a command: the matrix stays pure (install's plan imports it), so it
            # cannot name neuron-env as a fresh shell finds it; the message lists the releases.
            hint="Add a newer release file with --matrix-dir DIR or $NEURON_ENV_MATRIX_DIR; the "
            "matrix list command shows what each known release pairs.",
        )


def load_matrix(extra_dirs: Iterable[Path] | None = None) -> Matrix:
    """Load the shipped release files plus those in user directories (which take precedence).

    A user file replaces the shipped file of its release; two user files for one release
    (``2.35.toml`` and ``2.35.0.toml``, in one directory or in two) are bad input, not a silent
    choice of one. A run whose files are byte for byte those of an earlier run takes the matrix
    that run built (:mod:`neuron_env.memo`); any problem with a file is found by loading it.
    """
    shipped_dir = shipped_matrix_dir()
    directories = [shipped_dir, *user_matrix_dirs(list(extra_dirs or []))]
    sources = _sources(directories)
    if sources is None:
        return _load(shipped_dir, directories)
    import packaging

    from neuron_env.memo import remembered, source_files

    code = source_files(
        __name__,
        "neuron_env.matrix.model",
        "neuron_env.matrix.parsed",
        "neuron_env.schema",
        "neuron_env.input_files",
        "neuron_env.errors",
    )
    return remembered(
        "matrix",
        [*sources, packaging.__version__.encode(), *code],
        lambda: _load(shipped_dir, directories),
    )


def _load(shipped_dir: Path, directories: list[Path]) -> Matrix:
    by_version: dict[Version, Release] = {}
    shipped: dict[Version, Path] = {}
    added: dict[Version, Path] = {}
    for directory in directories:
        is_shipped = directory == shipped_dir
        files = shipped if is_shipped else added
        ahead = parsed_ahead(directory) if is_shipped else {}  # user directories: TOML only
        for path in _release_files(directory):
            release = load_release_file(path, ahead.get(path.name))
            _refuse_second_file(files, release.version, path)
            by_version[release.version] = release
    if not by_version:
        raise MatrixError(str(shipped_matrix_dir()), "", "no matrix files found")
    return Matrix(tuple(by_version[v] for v in sorted(by_version)))


def _sources(directories: list[Path]) -> list[bytes] | None:
    """What the matrix is built from: each directory, each release file's path, where it leads
    and its bytes; None when one cannot be read as the loader reads it (it then says why)."""
    import os

    sources: list[bytes] = []
    try:
        for directory in directories:
            refuse_control_characters(str(directory), "the matrix directory's path")
            if not directory.is_dir():
                return None
            sources.append(os.fsencode(directory))
            for path in sorted(directory.glob("*.toml")):
                sources += [os.fsencode(path), os.fsencode(os.path.realpath(path))]
                sources.append(read_bytes(path, MATRIX_LIMITS.max_bytes))
    except Exception:  # the loader reports it, as bad input
        return None
    return sources


def _refuse_second_file(seen: dict[Version, Path], version: Version, path: Path) -> None:
    earlier = seen.setdefault(version, path)
    if earlier.resolve() != path.resolve():
        raise MatrixError(
            str(path),
            "release.version",
            f"describes release {version}, which {earlier} describes too",
            hint="Keep one file per release: remove or rename one of them.",
        )


def _release_files(directory: Path) -> list[Path]:
    try:
        refuse_control_characters(str(directory), "the matrix directory's path")
    except InputRejected as exc:
        raise MatrixError(
            repr(str(directory)),
            "",
            exc.problem,
            hint="Check --matrix-dir and $NEURON_ENV_MATRIX_DIR.",
        ) from None
    if not directory.is_dir():
        raise MatrixError(
            str(directory),
            "",
            "matrix directory does not exist or is not a directory",
            hint="Check --matrix-dir and $NEURON_ENV_MATRIX_DIR.",
        )
    return sorted(directory.glob("*.toml"))


def load_release_file(path: Path, parsed: Lookup | None = None) -> Release:
    """Read, parse and validate one release file; any problem is a :class:`MatrixError`.

    ``parsed`` may supply the file's document parsed ahead of time (shipped files only).
    """
    return release_from(path, read_toml(path, MATRIX_LIMITS, parsed))


def release_from(path: Path, data: dict[str, Any]) -> Release:
    """Validate the document read from the release file ``path``; any problem is a
    :class:`MatrixError`."""
    schema = data.get("schema")
    if isinstance(schema, bool) or schema != SCHEMA_VERSION:
        raise MatrixError(
            str(path),
            "schema",
            f"unknown schema version {schema!r}; this neuron-env reads schema {SCHEMA_VERSION}",
            hint="Upgrade neuron-env, or write the file for schema version 1.",
        )
    try:
        release = parse(Release, data)
        validate_release(release)
    except SchemaError as exc:
        raise MatrixError(str(path), exc.key, exc.problem) from None
    _check_file_name(path, release)
    return dataclasses.replace(release, origin=path)


def read_toml(
    path: Path, limits: Limits = TOML_LIMITS, parsed: Lookup | None = None
) -> dict[str, Any]:
    """A TOML file read within ``limits`` (size, depth, integers, strings); else a MatrixError."""
    try:
        return load_toml(path, limits, parsed)
    except Unreadable as exc:
        raise MatrixError(str(path), "", f"cannot read file: {exc.problem}") from None
    except InputRejected as exc:
        raise MatrixError(str(path), exc.key, exc.problem) from None


def _check_file_name(path: Path, release: Release) -> None:
    try:
        named = Version(path.stem)
    except InvalidVersion:
        named = None
    if named != release.version:
        raise MatrixError(
            str(path),
            "release.version",
            f"file describes release {release.version} but is named '{path.name}'",
            hint=f"Rename it to '{release.version}.toml'.",
        )


def validate_release(release: Release) -> None:
    """Cross-field rules that single fields cannot express; raises :class:`SchemaError`."""
    for problem in _problems(release):
        raise problem


def _problems(r: Release) -> Iterator[SchemaError]:
    yield from _source_problems(r)
    yield from _pairing_problems(r)
    yield from _routing_problems(r)
    yield from _platform_problems(r)
    yield from _companion_problems(r)
    yield from _known_issue_problems(r)
    ids = [lim.id for lim in r.limitations]
    for dup in {i for i in ids if ids.count(i) > 1}:
        yield SchemaError(["limitations"], f"duplicate limitation id '{dup}'")


def _source_problems(r: Release) -> Iterator[SchemaError]:
    for key, url in r.sources.items():
        if not url.startswith("https://"):
            yield SchemaError(["sources", key], f"source '{key}' must be an https:// URL")
    for path, key in _source_references(r):
        if key not in r.sources:
            yield SchemaError(path, f"unknown source '{key}'; define it in [sources]")


def _source_references(obj: Any) -> list[tuple[list[str | int], str]]:
    """Every (key path, source key) referenced anywhere in the release, in file order."""
    found: list[tuple[list[str | int], str]] = []
    _collect_references(obj, (), found)
    return found


def _collect_references(
    obj: Any, path: tuple[str | int, ...], found: list[tuple[list[str | int], str]]
) -> None:
    # One list filled by plain recursion over each class's fields, looked up once per class:
    # generators nested as deep as the release, asking dataclasses.fields at every object,
    # cost ~3 ms a doctor run. Only what can hold a reference is entered.
    if isinstance(obj, dict):
        for key, value in obj.items():
            if _may_refer(value):
                _collect_references(value, (*path, key), found)
    elif isinstance(obj, tuple):
        for i, value in enumerate(obj):
            if _may_refer(value):
                _collect_references(value, (*path, i), found)
    else:
        for name, key in _keys(obj.__class__):
            value = getattr(obj, name)
            if name == "sources" and isinstance(value, tuple):
                found.extend(([*path, "sources", i], source) for i, source in enumerate(value))
            elif name == "source" and isinstance(value, str):
                found.append(([*path, "source"], value))
            elif _may_refer(value):
                _collect_references(value, (*path, key), found)


def _may_refer(value: Any) -> bool:
    return isinstance(value, (dict, tuple)) or dataclasses.is_dataclass(value)


@functools.cache
def _keys(cls: Any) -> tuple[tuple[str, str], ...]:
    """(attribute, TOML key) of each field of the dataclass ``cls``."""
    return tuple((f.name, toml_key(f)) for f in dataclasses.fields(cls))


def _pairing_problems(r: Release) -> Iterator[SchemaError]:
    seen: dict[str, int] = {}
    for i, pairing in enumerate(r.pairings):
        if pairing.torch_minor in seen:
            yield SchemaError(
                ["pairings", i, "torch"],
                f"duplicate pairing: torch {pairing.torch_minor} is already paired in "
                f"pairings[{seen[pairing.torch_minor]}]",
            )
        seen[pairing.torch_minor] = i
        if pairing.torch_neuronx in r.legacy_xla.versions:
            yield SchemaError(
                ["pairings", i, "torch-neuronx"],
                f"torch-neuronx {pairing.torch_neuronx} falls in the legacy XLA range "
                f"'{r.legacy_xla.versions}'",
            )
    if not r.pairings:
        yield SchemaError(["pairings"], "a release needs at least one pairing")


def _routing_problems(r: Release) -> Iterator[SchemaError]:
    routed = [*ROUTED_PACKAGES, *r.packages]
    for name, index in r.indexes.items():
        if not index.url.startswith(("https://", "http://")):
            yield SchemaError(["indexes", name, "url"], "index url must be an http(s) URL")
    for package in routed:
        owners = [name for name, ix in r.indexes.items() if package in ix.serves]
        if len(owners) != 1:
            yield SchemaError(
                ["indexes"],
                f"package '{package}' must be served by exactly one index, "
                f"found {owners or 'none'}",
            )
    for package, placeholder in r.placeholders.items():
        if package in r.packages and any(
            v in SpecifierSet(r.packages[package].requirement_spec) for v in placeholder.versions
        ):
            yield SchemaError(
                ["placeholders", package], "a placeholder version satisfies the release's own pin"
            )


def _platform_problems(r: Release) -> Iterator[SchemaError]:
    for name, family in r.families.items():
        if family.chip is not None and family.chip not in r.chips:
            yield SchemaError(["families", name, "chip"], f"unknown chip '{family.chip}'")
    for name, itype in r.instance_types.items():
        if itype.family not in r.families:
            yield SchemaError(
                ["instance-types", name, "family"], f"unknown family '{itype.family}'"
            )
        for key, cited in itype.cites.items():
            for i, source in enumerate(cited):
                if source not in r.sources:
                    yield SchemaError(
                        ["instance-types", name, "cites", key, i],
                        f"unknown source '{source}'; define it in [sources]",
                    )
        if itype.max_efa > itype.network_cards * itype.enis_per_card:
            yield SchemaError(
                ["instance-types", name, "max-efa"], "more EFA interfaces than network interfaces"
            )
    for i, dlami in enumerate(r.dlamis):
        if dlami.os not in r.os:
            yield SchemaError(["dlamis", i, "os"], f"unknown OS '{dlami.os}'; define it in [os]")


def _companion_problems(r: Release) -> Iterator[SchemaError]:
    """Companions: known PyTorch minors, native families, a known index, no clash with a pin."""
    paired = [p.torch_minor for p in r.pairings]
    native = sorted(name for name, family in r.families.items() if family.native)
    pinned = {*ROUTED_PACKAGES, *r.packages}
    for name, companion in r.companions.items():
        path: list[str | int] = ["companions", name]
        if name in pinned:
            yield SchemaError(path, f"'{name}' is pinned by the release itself, not a companion")
        yield from _outside(
            [*path, "torch"],
            companion.torch,
            paired,
            lambda minor: (
                f"PyTorch {minor} is not paired by this release (it pairs {', '.join(paired)})"
            ),
        )
        yield from _outside(
            [*path, "families"],
            companion.families,
            native,
            lambda family: (
                f"'{family}' is not a family the native backend supports here "
                f"(expected one of: {', '.join(native)})"
            ),
        )
        if companion.index not in r.indexes:
            yield SchemaError(
                [*path, "index"], f"unknown index '{companion.index}'; define it in [indexes]"
            )
        placeholder = r.placeholders.get(name)
        if placeholder and any(
            SpecifierSet(companion.requirement_spec).contains(v, prereleases=True)
            for v in placeholder.versions
        ):
            yield SchemaError(path, "a placeholder version satisfies the companion's own pin")


def _outside(
    path: list[str | int],
    values: Sequence[T],
    allowed: Collection[T],
    problem: Callable[[T], str],
) -> Iterator[SchemaError]:
    """An error at ``path``/index for each of ``values`` not in ``allowed``, said as ``problem``."""
    for i, value in enumerate(values):
        if value not in allowed:
            yield SchemaError([*path, i], problem(value))


def _known_issue_problems(r: Release) -> Iterator[SchemaError]:
    """Known issues: unique ids, fixed in a later release, on lines the release ships."""
    seen: set[str] = set()
    shipped = [p.torch_neuronx for p in r.pairings]
    for i, issue in enumerate(r.known_issues):
        path: list[str | int] = ["known-issues", i]
        if issue.id in seen:
            yield SchemaError([*path, "id"], f"duplicate known-issue id '{issue.id}'")
        seen.add(issue.id)
        if issue.fixed_in <= r.version:
            yield SchemaError(
                [*path, "fixed-in"],
                f"release {issue.fixed_in} is not later than this release ({r.version})",
            )
        if issue.package == "torch-neuronx":
            yield from _outside(
                [*path, "affects"],
                issue.affects,
                shipped,
                lambda line: (
                    f"torch-neuronx {line} is not a family this release pairs "
                    f"({', '.join(map(str, shipped))})"
                ),
            )
