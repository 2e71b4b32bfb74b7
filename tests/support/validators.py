"""The users' own validators, run plainly: no flag that hides a check.

Each tool comes from the test extra in ``pyproject.toml`` (pinned), so it sits beside the test
interpreter; the tests never take an older copy from the system's PATH (Debian's shellcheck is
0.9, which misses checks 0.11 makes, such as SC2329). Run each tool once over many files: every
start costs a fraction of a second in the five-minute suite.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

BIN = Path(sys.executable).parent
SHELLCHECK = BIN / "shellcheck"
CFN_LINT = BIN / "cfn-lint"
HADOLINT = BIN / "hadolint"
CHECK_JSONSCHEMA = BIN / "check-jsonschema"
KUBERNETES_VALIDATE = BIN / "kubernetes-validate"
SHELLCHECK_VERSION = "0.11.0"


def shellcheck(
    paths: Sequence[Path], *, stdin: str | None = None, shell: str | None = None
) -> subprocess.CompletedProcess[str]:
    """shellcheck over ``paths`` (or ``-`` reading ``stdin``), as a user runs it: no option that
    hides a check. ``shell`` names the dialect of a script without a shebang (SSM's scripts)."""
    dialect = ["--shell", shell] if shell else []
    args = [str(p) for p in paths] or ["-"]
    return subprocess.run(
        [str(SHELLCHECK), *dialect, *args], input=stdin, capture_output=True, text=True, check=False
    )


def assert_shellcheck_clean(
    *paths: Path, stdin: str | None = None, shell: str | None = None
) -> None:
    """Fail with shellcheck's own report unless every script is clean."""
    lint = shellcheck(paths, stdin=stdin, shell=shell)
    assert lint.returncode == 0, lint.stdout + lint.stderr
