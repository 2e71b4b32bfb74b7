"""Folders this user may not read: named, never a traceback, never passed over in silence.

``scan .`` in a repository with a folder the user cannot list (another user's checkout under a
shared tree, a ``chmod 000`` build folder) ended in a PermissionError traceback (the walk asked
whether the folder was a venv); os.walk itself passes over such a folder without a word, so a
gate would pass on code it never read. ``sudo -u USER neuron-env doctor`` from root's home (a
working directory the user may not look into) ended in a traceback too. As root the cases run
without the capabilities that let root read anything (setpriv), or as ``nobody``.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner, cli_runner
from tests.support.hosts import DROP_ROOT_OVERRIDE

pytestmark = pytest.mark.integration

XLA_SCRIPT = DATA / "scan" / "corpus" / "xla_training_script.py"


@pytest.fixture
def as_user(tmp_path: Path) -> CliRunner:
    """The console script as this user, with file permissions applying to root too."""
    prefix = DROP_ROOT_OVERRIDE if os.geteuid() == 0 else []
    return cli_runner(tmp_path, prefix=prefix)


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[Path]:
    """A project with a readable folder and one nobody may list (mode 000)."""
    project = tmp_path / "project"
    for folder in ("open", "locked"):
        (project / folder).mkdir(parents=True)
        shutil.copy(XLA_SCRIPT, project / folder / "train.py")
    (project / "locked").chmod(0)
    yield project
    (project / "locked").chmod(0o755)


def test_a_folder_that_cannot_be_listed_is_a_finding_not_a_traceback(
    as_user: CliRunner, locked: Path
) -> None:
    result = as_user("scan", str(locked), "--format", "json")
    assert "Traceback" not in result.stderr
    assert result.returncode == 1, result.stderr
    findings = json_findings(result.stdout)
    errors = [f for f in findings if f["rule"] == "scan-error"]
    assert [(f["path"], f["message"]) for f in errors] == [
        (
            "project/locked",
            "cannot read the folder: Permission denied; nothing in it was scanned",
        )
    ]
    assert any(f["path"] == "project/open/train.py" for f in findings)


def test_a_top_folder_that_cannot_be_read_is_bad_input(as_user: CliRunner, locked: Path) -> None:
    result = as_user("scan", str(locked / "locked"))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    said = " ".join(result.stderr.split())
    assert f"Path '{locked / 'locked'}' is not readable." in said


@pytest.mark.skipif(os.geteuid() != 0, reason="runs as nobody from a folder only root may read")
def test_doctor_from_a_working_directory_it_may_not_read(as_user: CliRunner) -> None:
    """``sudo -u nobody neuron-env doctor`` from a folder only root may read: ./.venv-neuron
    cannot be looked for there, so doctor judges its own environment, as with none."""
    private = Path(tempfile.mkdtemp(prefix="neuron-env-private-", dir="/tmp"))  # mode 0700
    try:
        nobody = pwd.getpwnam("nobody")
        prefix = ["setpriv", f"--reuid={nobody.pw_uid}", f"--regid={nobody.pw_gid}",
                  "--clear-groups", "--"]  # fmt: skip
        result = cli_runner(private, prefix=prefix)("doctor", "--format", "json")
        assert "Traceback" not in result.stderr, result.stderr
        assert result.returncode in (1, 3), result.stderr
        assert json.loads(result.stdout)["target"]["chosen_by"] == "neuron-env's own environment"
        # root's venv, its VIRTUAL_ENV kept by sudo -E: named, never swapped for another
        kept = cli_runner(Path("/"), prefix=prefix)("doctor", env={"VIRTUAL_ENV": str(private)})
        assert kept.returncode == 2, kept.stderr
        said = " ".join(kept.stderr.split())
        assert f"$VIRTUAL_ENV names {private}, which this user may not look into" in said
    finally:
        shutil.rmtree(private)


def json_findings(stdout: str) -> list[dict[str, str]]:
    return list(json.loads(stdout)["findings"])
