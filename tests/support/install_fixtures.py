"""Plans for the install unit tests, built the way the command builds them (from a matrix)."""

from __future__ import annotations

from pathlib import Path

from neuron_env.install.plan import Choices, InstallPlan, make_plan
from neuron_env.matrix import Request, load_matrix, resolve_target

TEST_MATRIX = Path(__file__).resolve().parents[1] / "data" / "install" / "matrix"


def plan_for(torch: str = "2.14", release: str = "2.90.0", **choices: object) -> InstallPlan:
    """A plan for the test release (or a shipped one), with ``choices`` overriding defaults."""
    matrix = load_matrix([TEST_MATRIX])
    target = resolve_target(matrix, Request(torch=torch, python="3.12", release=release))
    values: dict[str, object] = {
        "venv": "/srv/env",
        "action": "create",
        "base_python": "/usr/bin/python3.12",
        "backend": "uv",
        "installed": {},
    }
    values.update(choices)
    return make_plan(matrix.get(release), target, Choices(**values))  # type: ignore[arg-type]
