"""A distribution recorded twice in one site-packages: an install or uninstall stopped half-way.

``pip install torch==2.14.0`` killed between writing the new record and removing the old leaves
``torch-2.13.0.dist-info`` beside ``torch-2.14.0.dist-info``; which version's files are on disk
is unknown, and importlib.metadata (so pip) and doctor's probe each took the first record their
listing gave: doctor judged one version, ``python -c 'import importlib.metadata ...'`` said the
other. An uninstall stopped half-way leaves ``~orch-2.13.0.dist-info`` instead, which pip
ignores ("Ignoring invalid distribution ~orch"), and so does doctor. Each case builds the
records in a real venv and asks its interpreter too.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.support.cli import CliRunner
from tests.support.dists import make_venv, site_packages, write_dist_info

pytestmark = pytest.mark.integration


def conflicts(cli: CliRunner, python: Path) -> dict[str, str]:
    result = cli("doctor", "--python", str(python), "--check", "python.conflicts",
                 "--format", "json")  # fmt: skip
    (finding,) = json.loads(result.stdout)["findings"]
    assert result.returncode == (1 if finding["status"] == "fail" else 0), result.stderr
    return dict(finding)


def records(python: Path, name: str) -> list[str]:
    """The versions importlib.metadata lists for ``name``, in the order it finds them."""
    listed = f"[d.version for d in m.distributions() if d.metadata['Name'] == {name!r}]"
    code = f"import importlib.metadata as m, json; print(json.dumps({listed}))"
    out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def venv_with(tmp_path: Path, name: str, *versions: str) -> Path:
    """A venv holding a record of ``name`` for each of ``versions``; returns its interpreter."""
    python = make_venv(tmp_path / "venv")
    for version in versions:
        write_dist_info(site_packages(tmp_path / "venv"), name, version)
    return python


def test_torch_recorded_twice_fails_with_the_install_that_rebuilds_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    python = venv_with(tmp_path, "torch", "2.13.0", "2.14.0")
    assert sorted(records(python, "torch")) == ["2.13.0", "2.14.0"]  # the ground truth
    finding = conflicts(cli, python)
    assert finding["status"] == "fail"
    assert finding["summary"] == (
        "Recorded more than once in one site-packages (an install or uninstall stopped "
        "half-way): torch 2.13.0 and 2.14.0"
    )
    assert " install --torch 2.13 --release " in finding["fix"]


def test_another_package_recorded_twice_is_uninstalled_once_per_record(
    cli: CliRunner, tmp_path: Path
) -> None:
    python = venv_with(tmp_path, "requests", "2.31.0", "2.32.3")
    finding = conflicts(cli, python)
    assert finding["status"] == "fail"
    assert finding["summary"].endswith(": requests 2.31.0 and 2.32.3")
    uninstall = f"{python} -m pip uninstall -y requests"
    assert finding["fix"] == (
        f"{python} -m ensurepip --default-pip && {uninstall} && {uninstall} && "
        f"{python} -m pip install requests==2.31.0"
    )


def test_an_interrupted_uninstall_s_leftover_is_ignored_as_pip_ignores_it(
    cli: CliRunner, tmp_path: Path
) -> None:
    python = venv_with(tmp_path, "torch", "2.14.0")
    site = site_packages(tmp_path / "venv")
    leftover = site / "~orch-2.13.0.dist-info"
    write_dist_info(tmp_path, "torch", "2.13.0")
    (tmp_path / "torch-2.13.0.dist-info").rename(leftover)
    facts = json.loads(cli("facts", "--python", str(python)).stdout)["facts"]
    torch = facts["python"]["distributions"]["torch"]
    assert (torch["version"], torch["duplicates"]) == ("2.14.0", [])
    assert conflicts(cli, python)["status"] == "ok"
