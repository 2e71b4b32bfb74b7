"""The target Python environment: which interpreter, and what it has installed.

The facts come from running ``_python_probe.py`` (standard library only) inside the target
interpreter, so neuron-env can inspect an environment that lacks its own dependencies.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from neuron_env.command import run
from neuron_env.errors import BadInput, OperationFailed
from neuron_env.facts import PythonFacts
from neuron_env.invocation import command
from neuron_env.schema import JSON_LENIENT, SchemaError, parse

PROBE_SCRIPT = Path(__file__).with_name("_python_probe.py")
DEFAULT_VENV = ".venv-neuron"
"""The environment printed fixes create; judged by default when it is in the working directory."""


OWN_ENVIRONMENT = "neuron-env's own environment"
"""How a target was chosen when nothing else named one: the interpreter neuron-env runs in."""


def find_target_python(python: Path | None = None, venv: Path | None = None) -> Path:
    """The interpreter to inspect: ``--python``, else ``--venv``, else the active virtualenv,
    else a ``.venv-neuron`` in the working directory (where the printed install command creates
    one), else the interpreter neuron-env runs in."""
    return choose_target_python(python, venv)[0]


def choose_target_python(python: Path | None = None, venv: Path | None = None) -> tuple[Path, str]:
    """:func:`find_target_python`'s interpreter and how it was chosen: ``--python``, ``--venv``,
    ``$VIRTUAL_ENV``, ``./.venv-neuron`` or :data:`OWN_ENVIRONMENT`."""
    if python is not None and venv is not None:
        raise BadInput("Give either --python or --venv, not both.")
    if venv is not None:
        candidate = venv / "bin" / "python"
        if not candidate.exists():
            raise BadInput(
                f"{venv} is not a virtual environment (no bin/python).",
                hint="Create it with: "
                + command("install", "--torch", "2.14", "--venv", str(venv))
                + " (or pass --python PATH).",
            )
        return candidate, "--venv"
    if python is not None:
        if not python.exists():
            raise BadInput(f"Python interpreter {python} does not exist.")
        return python, "--python"
    active = os.environ.get("VIRTUAL_ENV")
    defaults = [(Path(active), "$VIRTUAL_ENV")] if active else []
    for candidate, why in [*defaults, (Path(DEFAULT_VENV).absolute(), f"./{DEFAULT_VENV}")]:
        if (candidate / "bin" / "python").exists():
            return candidate / "bin" / "python", why
    return Path(sys.executable), OWN_ENVIRONMENT


def probe_python(python: Path, *, timeout: float = 10.0) -> PythonFacts:
    """Facts about ``python``'s environment; raises on failure (the caller records it)."""
    # The user's environment is passed through on purpose: their pip configuration is a fact.
    result = run([python, "-I", PROBE_SCRIPT], timeout=timeout, env=None)
    try:
        return parse(PythonFacts, json.loads(result.stdout), ["python"], JSON_LENIENT)
    except (ValueError, SchemaError) as exc:
        raise OperationFailed(f"{python} returned unreadable facts: {exc}") from None
