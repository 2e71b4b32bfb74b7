"""The versioned support matrix: data model, loading and validation, resolution, diffs.

The names below load their submodule on first use (PEP 562), so a doctor run, which loads and
judges but never resolves an install or diffs two releases, does not import those parts.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_SUBMODULE = {
    "Change": "diff",
    "diff_releases": "diff",
    "Matrix": "load",
    "load_matrix": "load",
    "load_release_file": "load",
    "Release": "model",
    "CompanionPin": "resolve",
    "Note": "resolve",
    "Pin": "resolve",
    "Request": "resolve",
    "SystemPin": "resolve",
    "Target": "resolve",
    "resolve_target": "resolve",
}

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


def __getattr__(name: str) -> Any:
    submodule = _SUBMODULE.get(name)
    if submodule is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f"{__name__}.{submodule}"), name)
    globals()[name] = value
    return value
