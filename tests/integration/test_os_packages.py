"""``python.requirements`` on a system Python: the OS's own packages are its package manager's.

``tests/data/snapshots/debian-12-system-python.json`` is ``neuron-env facts --python
/usr/bin/python3 --redact`` on a Debian 12 (bookworm) container with python3-gi installed: apt's
``python3-*`` packages record no INSTALLER, and python3-gi's PyGObject 3.42.2 requires a pycairo
that only python3-gi-cairo brings, so ``pip check`` there says "pygobject 3.42.2 requires
pycairo". doctor used to fail the check with ``/usr/bin/python3 -m pip install
'pycairo>=1.16.0'``, which that Python refuses (PEP 668: it is externally managed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import DATA, CliRunner

pytestmark = pytest.mark.integration

SNAPSHOT = DATA / "snapshots" / "debian-12-system-python.json"


def requirements_finding(cli: CliRunner, doc: dict[str, Any], where: Path) -> dict[str, Any]:
    path = where / "facts.json"
    path.write_text(json.dumps(doc))
    result = cli("doctor", "--facts", str(path), "--check", "python.requirements",
                 "--format", "json")  # fmt: skip
    (finding,) = json.loads(result.stdout)["findings"]
    assert result.returncode == (1 if finding["status"] == "fail" else 0), result.stderr
    return dict(finding)


def test_an_os_package_s_unmet_requirement_is_left_to_the_os(
    cli: CliRunner, tmp_path: Path
) -> None:
    doc = json.loads(SNAPSHOT.read_text())
    python = doc["facts"]["python"]
    assert python["in_venv"] is False and python["distributions"]["pygobject"]["installer"] is None
    finding = requirements_finding(cli, doc, tmp_path)
    assert finding["status"] == "ok"
    assert finding["summary"] == (
        "The requirements of all 27 distributions are met, but 1 requirement of the OS's own "
        "packages, which its package manager keeps"
    )
    assert "pygobject 3.42.2 needs pycairo>=1.16.0, but it is not installed" in finding["detail"]
    assert finding["fix"] == ""


@pytest.mark.parametrize("change", ["installed by pip", "in a venv", "another prefix"])
def test_the_same_requirement_fails_where_pip_owns_the_package(
    cli: CliRunner, tmp_path: Path, change: str
) -> None:
    doc = json.loads(SNAPSHOT.read_text())
    python = doc["facts"]["python"]
    if change == "installed by pip":  # pip install --break-system-packages PyGObject
        python["distributions"]["pygobject"]["installer"] = "pip"
    elif change == "in a venv":
        python["in_venv"] = True
    else:  # a conda or a self-built Python: its packages are not the OS's
        python["prefix"] = "/opt/conda"
    finding = requirements_finding(cli, doc, tmp_path)
    assert finding["status"] == "fail"
    assert finding["summary"] == "pygobject 3.42.2 needs pycairo>=1.16.0, but it is not installed"
    assert finding["fix"] == "/usr/bin/python3 -m pip install 'pycairo>=1.16.0'"
