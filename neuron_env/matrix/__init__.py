"""The versioned support matrix: data model, loading and validation, resolution, diffs."""

from neuron_env.matrix.diff import Change, diff_releases
from neuron_env.matrix.load import Matrix, load_matrix, load_release_file
from neuron_env.matrix.model import Release
from neuron_env.matrix.resolve import (
    CompanionPin,
    Note,
    Pin,
    Request,
    SystemPin,
    Target,
    resolve_target,
)

__all__ = [
    "Change",
    "CompanionPin",
    "Matrix",
    "Note",
    "Pin",
    "Release",
    "Request",
    "SystemPin",
    "Target",
    "diff_releases",
    "load_matrix",
    "load_release_file",
    "resolve_target",
]
