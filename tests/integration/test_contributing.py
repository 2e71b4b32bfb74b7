"""CONTRIBUTING.md's recipes run as pasted: the fake ``neuron`` device, by hand."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, REPO

pytestmark = pytest.mark.integration


def recipe_after(marker: str) -> str:
    """The ``sh`` block that follows ``marker`` in CONTRIBUTING.md."""
    text = (REPO / "CONTRIBUTING.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", text[text.index(marker) :], re.DOTALL)
    assert block, f"no sh block after {marker!r}"
    return block.group(1)


def test_the_fake_device_recipe_runs_as_pasted_and_shows_the_injected_fault(
    tmp_path: Path,
) -> None:
    """Run from the repository root like a contributor would; only where it writes (its own
    folder, not /tmp/fake-env) and which neuron-env (the suite's, in .venv-test on CI) differ.
    pip uses the machine's configuration on purpose, as scripts/test.sh does for torch."""
    recipe = recipe_after("To try it by hand:")
    assert ".venv-test/bin/neuron-env selftest" in recipe
    recipe = recipe.replace("/tmp/fake-env", str(tmp_path / "fake-env"))
    recipe = recipe.replace(".venv-test/bin/neuron-env", str(NEURON_ENV))
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH")}
    *setup, selftest = recipe.strip().splitlines()
    for line in (*setup, selftest):
        ran = subprocess.run(["bash", "-c", line], cwd=REPO, env=env, capture_output=True,
                             text=True, timeout=600, check=False)  # fmt: skip
        said = ran.stdout[-3000:] + ran.stderr[-3000:]
        assert ran.returncode == (1 if line == selftest else 0), f"{line}\n{said}"
    assert "matmul/fp32/eager" in ran.stdout and "✗ fail" in ran.stdout, ran.stdout
    assert "self-test (quick) on neuron FAILED" in ran.stdout
