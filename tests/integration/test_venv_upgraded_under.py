"""A venv whose interpreter was upgraded under it: made with one Python, running another.

``python3 -m venv`` on Ubuntu links the venv's ``bin/python`` to ``/usr/bin/python3``; an OS
release upgrade points that at a newer Python (3.12 -> 3.14), which then runs the venv without
looking in its ``lib/python3.12/site-packages``: every package is gone from its view. doctor
said "PyTorch is not installed" and offered to install into the venv, which would mix two
Pythons' folders. pyvenv.cfg still records the version it was made with (venv writes
``version``, uv ``version_info``); here the running Python is the new one, and pyvenv.cfg and
the site-packages folder are an older minor's, as the upgrade leaves them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import CliRunner
from tests.support.dists import make_venv, write_dist_info
from tests.support.hosts import write_matrix

pytestmark = pytest.mark.integration

OLD = f"{sys.version_info.major}.{sys.version_info.minor - 1}"


@pytest.mark.parametrize("key", ["version", "version_info"], ids=["venv", "uv"])
def test_a_venv_made_with_another_python_is_told_to_be_made_again(
    cli: CliRunner, tmp_path: Path, key: str
) -> None:
    venv = tmp_path / "venv"
    python = make_venv(venv)
    config = venv / "pyvenv.cfg"
    lines = [line for line in config.read_text().splitlines() if not line.startswith("version")]
    config.write_text("\n".join([*lines, f"{key} = {OLD}.12", ""]))
    write_dist_info(venv / "lib" / f"python{OLD}" / "site-packages", "torch", "2.14.0")
    seen = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('torch'))"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert seen.returncode != 0 and "PackageNotFoundError" in seen.stderr  # the ground truth

    matrix = write_matrix("allows-test-python", tmp_path)  # the releases, allowing this Python
    result = cli("--matrix-dir", str(matrix), "doctor", "--python", str(python),
                 "--check", "platform.python", "--format", "json")  # fmt: skip
    assert result.returncode == 1, result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    running = ".".join(map(str, sys.version_info[:3]))
    assert finding["status"] == "fail"
    assert finding["summary"] == (
        f"{venv} was made with Python {OLD}.12 but its python now runs {running}: the "
        "interpreter it links to was upgraded under it (an OS release upgrade), and its packages "
        f"in lib/python{OLD}/site-packages are not seen"
    )
    assert finding["fix"].startswith(f"rm -rf {venv} && ")
    assert f"install --torch 2.14 --release 2.34.0 --venv {venv}" in finding["fix"]
