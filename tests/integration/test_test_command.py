"""``scripts/test.sh`` says which OS packages it needs, and why, before it installs any."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import REPO

pytestmark = pytest.mark.integration


def test_missing_os_packages_are_named_with_their_reason_before_anything_runs(
    tmp_path: Path,
) -> None:
    # A PATH with bash and coreutils but no curl, chromium or apt-get: the script cannot install
    # them, so it must say what is missing and stop before it builds a venv or runs a tool.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "dirname", "id", "sha256sum", "cat"):
        found = shutil.which(tool)
        assert found, tool
        (bin_dir / tool).symlink_to(found)
    env = {"PATH": str(bin_dir), "HOME": str(tmp_path), "NEURON_ENV_TEST_VENV": str(tmp_path / "v")}
    result = subprocess.run(
        ["bash", str(REPO / "scripts" / "test.sh")], env=env,
        capture_output=True, text=True, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert "The tests need these OS packages:" in result.stderr
    assert "curl: the bootstrap test fetches over HTTP" in result.stderr
    assert "chromium: the HTML report tests" in result.stderr
    assert "sudo apt-get install curl util-linux chromium" in result.stderr
    assert not (tmp_path / "v").exists()
