"""``matrix list|show|resolve|diff|validate``: what the support matrix says, as results.

Each operation loads the matrix (the shipped files and any ``--matrix-dir`` overlays) and returns
what was asked; :mod:`neuron_env.matrix.commands.output` writes it as text or JSON.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from neuron_env.errors import EXIT_BAD_INPUT, NeuronEnvError
from neuron_env.frozen import frozen
from neuron_env.matrix import Change, Matrix, Release, Request, Target


@frozen(kw_only=True)
class MatrixRequest:
    """Which matrix (the shipped files and overlays) and which release in it (None: the latest)."""

    matrix_dirs: Sequence[Path] = ()
    release: str | None = None


@frozen
class ReleaseList:
    matrix: Matrix


@frozen
class ReleaseShown:
    release: Release


def list_releases(request: MatrixRequest) -> ReleaseList:
    """The releases the matrix knows, newest last."""
    return ReleaseList(_load(request.matrix_dirs))


def show_release(request: MatrixRequest) -> ReleaseShown:
    """Everything the matrix knows about one release."""
    return ReleaseShown(_load(request.matrix_dirs).get(request.release))


@frozen(kw_only=True)
class ResolveRequest:
    """A combination to resolve to exact pins (what ``wanted`` leaves out is chosen by the
    matrix), against the shipped files and any overlays."""

    wanted: Request
    matrix_dirs: Sequence[Path] = ()


@frozen
class ResolvedTarget:
    request: Request
    target: Target


def resolve(request: ResolveRequest) -> ResolvedTarget:
    """The exact pins, their indexes and notes; an unsupported combination is bad input."""
    from neuron_env.invocation import program
    from neuron_env.matrix import resolve_target

    wanted = request.wanted
    target = resolve_target(_load(request.matrix_dirs), wanted, program=program())
    return ResolvedTarget(wanted, target)


@frozen(kw_only=True)
class DiffRequest:
    matrix_dirs: Sequence[Path] = ()
    old: str
    new: str
    prose: bool = False  # also compare notes and summaries


@frozen
class ReleaseDiff:
    old: str  # as asked
    new: str
    before: Release
    after: Release
    changes: Sequence[Change]


def diff(request: DiffRequest) -> ReleaseDiff:
    """What changed from one release to another."""
    from neuron_env.matrix import diff_releases

    matrix = _load(request.matrix_dirs)
    before, after = matrix.get(request.old), matrix.get(request.new)
    changes = diff_releases(before, after, prose=request.prose)
    return ReleaseDiff(request.old, request.new, before, after, changes)


@frozen(kw_only=True)
class ValidateRequest:
    files: Sequence[Path]


@frozen
class Validation:
    """Each file, and the release it holds or why it is not valid."""

    results: Sequence[tuple[Path, Release | NeuronEnvError]]

    @property
    def exit_code(self) -> int:
        invalid = any(isinstance(outcome, NeuronEnvError) for _, outcome in self.results)
        return EXIT_BAD_INPUT if invalid else 0


def validate(request: ValidateRequest) -> Validation:
    """Check matrix files with the rules neuron-env applies when it loads them."""
    from neuron_env.matrix import load_release_file

    results: list[tuple[Path, Release | NeuronEnvError]] = []
    for path in request.files:
        try:
            results.append((path, load_release_file(path)))
        except NeuronEnvError as exc:
            results.append((path, exc))
    return Validation(tuple(results))


def _load(matrix_dirs: Sequence[Path]) -> Matrix:
    from neuron_env.matrix import load_matrix

    return load_matrix(list(matrix_dirs))
