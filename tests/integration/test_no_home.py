"""A user with no home folder gets the same commands as any other.

A container run as an arbitrary uid (``docker run --user 4242``, Kubernetes' ``runAsUser``) has
no entry in ``/etc/passwd``; with ``HOME`` unset too (``env -i``, a service manager) Python
cannot name a home folder, and ``Path.home()`` raises. ``install`` took that for "--venv is a
symbolic link loop", and a real install and ``matrix verify`` ended in a traceback. Each case
runs the console script as such a uid (root drops to it with setpriv, as CI runs the suite).
"""

from __future__ import annotations

import os
import pwd
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import CliRunner, cli_runner
from tests.support.install_helpers import flat, isolated_environment, python_here

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(os.geteuid() != 0, reason="runs neuron-env as a uid no account has"),
]


def uid_without_account() -> int:
    for uid in range(4242, 60000):
        try:
            pwd.getpwuid(uid)
        except KeyError:
            return uid
    raise AssertionError("every uid from 4242 has an account")


@pytest.fixture
def homeless(install_matrix_dir: Path) -> Iterator[tuple[CliRunner, Path]]:
    """The console script run by a uid with no account and no HOME, in a folder it owns."""
    uid = uid_without_account()
    folder = Path(tempfile.mkdtemp(prefix="neuron-env-homeless-", dir="/tmp"))
    shutil.copytree(install_matrix_dir, folder / "matrix")
    for path in (folder, *folder.rglob("*")):
        os.chown(path, uid, uid)
    folder.chmod(0o755)
    env = isolated_environment(folder, folder / "matrix")
    unset = ("HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "TMPDIR", "PYENV_ROOT")
    for name in unset:
        env.pop(name, None)
    prefix = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    yield cli_runner(folder, prefix=prefix, base_env=env), folder
    shutil.rmtree(folder)


@pytest.mark.parametrize("pyenv", ["unset", "another user's"])
def test_install_looks_for_a_python_without_a_home_folder(
    homeless: tuple[CliRunner, Path], pyenv: str
) -> None:
    """The shipped releases want Python 3.12-3.14 and PATH has only this 3.11: install looks in
    pyenv's and uv's folders next (with no home, only those the environment names; one this
    user cannot read, as sudo keeps another user's PYENV_ROOT, is passed over), then says what
    to do, as for any user: not "a symbolic link loop", nor "Cannot read" the pyenv folder."""
    run, folder = homeless
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    (bin_dir / "python3").symlink_to(python_here())
    env = {"NEURON_ENV_MATRIX_DIR": "", "PATH": f"{bin_dir}:/usr/bin:/bin"}
    if pyenv == "another user's":
        root = folder / "pyenv"
        (root / "versions" / "3.12.1" / "bin").mkdir(parents=True)
        root.chmod(0o700)  # root's, and only root's
        env["PYENV_ROOT"] = str(root)
    result = run(
        "install", "--torch", "2.14", "--venv", str(folder / "env"), "--os", "ubuntu-26.04",
        "--dry-run", env=env,
    )  # fmt: skip
    said = flat(result.stderr)
    assert result.returncode == 2, said
    assert "No Python 3.12, 3.13, 3.14 found" in said
    assert "Pass one with --python PATH" in said


def test_a_failed_install_keeps_its_log_in_the_temporary_folder(
    homeless: tuple[CliRunner, Path],
) -> None:
    run, folder = homeless
    result = run("install", "--torch", "2.14", "--venv", str(folder / "env"))
    said = flat(result.stderr)
    assert "Traceback" not in said
    assert result.returncode == 1, said  # the test release's indexes listen nowhere
    assert "could not be reached" in said
    assert not (folder / "env").exists()
    log = Path(said.split("Full log: ")[1].split()[0])
    try:
        assert log.parent == Path("/tmp")
        assert "127.0.0.1" in log.read_text()
    finally:
        log.unlink(missing_ok=True)


def test_matrix_verify_reads_pip_settings_without_a_home_folder(
    homeless: tuple[CliRunner, Path],
) -> None:
    run, _ = homeless
    result = run("matrix", "verify", "--release", "2.90.0", "--timeout", "3")
    said = flat(result.stdout + result.stderr)
    assert "Traceback" not in said
    assert result.returncode == 1, said
    assert "index could not be read" in said
    assert "connection refused" in said
