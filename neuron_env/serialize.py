"""Plain-data conversion and the versioned JSON envelope every ``--json`` output uses.

The envelope is a public contract (docs/json-output.md)::

    {"schema": "neuron-env/<command>/v1", "neuron_env_version": "0.1.0", ...payload}
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from pathlib import Path
from typing import Any

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from neuron_env import __version__


def envelope(command: str, payload: dict[str, Any], version: int = 1) -> dict[str, Any]:
    """Wrap ``payload`` for command ``command`` (e.g. ``"matrix-resolve"``)."""
    return {
        "schema": f"neuron-env/{command}/v{version}",
        "neuron_env_version": __version__,
        **to_jsonable(payload),
    }


def to_jsonable(obj: Any) -> Any:
    """Dataclasses, versions, paths, dates and containers → JSON-compatible values."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, Version | SpecifierSet | Path):
        return str(obj)
    if isinstance(obj, datetime.date):
        return obj.isoformat()
    if isinstance(obj, enum.Enum):
        return obj.value
    return obj
