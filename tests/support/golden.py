"""Golden files for rendered launch templates and AMI recipes.

Every rendered document embeds ``scripts/bootstrap.sh`` (raw in user data, indented in
CloudFormation, escaped in Terraform, base64 in LaunchTemplateData). The goldens replace that body
with one marker line, after checking it is the shipped script exactly; so a change to the script
is reviewed once, in the script, and the goldens show only the layout around it.

Regenerate after a deliberate change, then review the diff before committing:

    NEURON_ENV_UPDATE_GOLDEN=1 .venv/bin/pytest tests/integration/test_cloud_render.py
"""

from __future__ import annotations

import os
from pathlib import Path

from neuron_env import __version__
from tests.support.cli import REPO

UPDATE = os.environ.get("NEURON_ENV_UPDATE_GOLDEN") == "1"
BOOTSTRAP = (REPO / "scripts" / "bootstrap.sh").read_text()
START = "<<'NEURON_ENV_BOOTSTRAP'"
END = "NEURON_ENV_BOOTSTRAP"
MARKER = "[scripts/bootstrap.sh, verbatim: {lines} lines, checked by the test]"


def redact_bootstrap(text: str, *, hcl: bool = False) -> str:
    """``text`` with the embedded bootstrap script replaced by a marker; asserts it is intact."""
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.rstrip().endswith(START))
    end = next(i for i in range(start + 1, len(lines)) if lines[i].strip() == END)
    indent = lines[end][: len(lines[end]) - len(lines[end].lstrip())]
    body = [line.removeprefix(indent) for line in lines[start + 1 : end]]
    embedded = "\n".join(body) + "\n"
    if hcl:
        embedded = embedded.replace("$${", "${").replace("%%{", "%{")
    assert embedded == BOOTSTRAP, "the embedded script differs from scripts/bootstrap.sh"
    marker = indent + MARKER.format(lines=len(body))
    return "\n".join([*lines[: start + 1], marker, *lines[end:]])


def without_version(text: str) -> str:
    """neuron-env's own version replaced by ``VERSION``, so a release does not touch goldens."""
    for pattern in ("neuron-env {}", "neuron-env=={}"):
        text = text.replace(pattern.format(__version__), pattern.format("VERSION"))
    return text


def check_golden(path: Path, actual: str) -> None:
    """Compare with the golden file (or rewrite it when NEURON_ENV_UPDATE_GOLDEN=1)."""
    actual = without_version(actual)
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(actual)
    assert path.is_file(), f"missing golden {path}; create it with NEURON_ENV_UPDATE_GOLDEN=1"
    assert actual == path.read_text(), f"{path.name} differs from its golden file"
