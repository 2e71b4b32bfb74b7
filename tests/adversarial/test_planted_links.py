"""``-o`` never writes through a link someone planted at the output path (issue 38 §1).

An attacker who can write a folder where root (or another user) sends a report plants
``out.json -> /etc/passwd``; following it replaces the system file. Every command's ``-o`` goes
through one writer (:mod:`neuron_env.output.files`): the report is written beside the path and
renamed over it, so a link is replaced, never followed, and a link in a world-writable sticky
folder, or one owned by another user, is refused with exit 2 naming the link and its target.
Each case runs as root (as CI does) and as an unprivileged user (``nobody``, through setpriv).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from tests.support.cli import CliRunner, cli_argv, cli_runner, machine_env

pytestmark = pytest.mark.integration

VICTIM_TEXT = "root:x:0:0:root:/root:/bin/bash\n"  # the shape of the file a planted link aims at
REPORT = ("doctor", "--list-checks", "--format", "json", "-o")  # the cheapest report with -o

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="plants files owned by other users")


@pytest.fixture
def shared_root() -> Iterator[Path]:
    """A folder every user can reach (pytest's own temporary folders are root's alone)."""
    folder = Path(tempfile.mkdtemp(prefix="neuron-env-links-", dir="/tmp"))
    folder.chmod(0o755)
    yield folder
    shutil.rmtree(folder)


def nobody() -> tuple[int, int]:
    entry = pwd.getpwnam("nobody")
    return entry.pw_uid, entry.pw_gid


def as_nobody(cwd: Path) -> CliRunner:
    """The console script run by ``nobody``, with no capability of root's left."""
    uid, gid = nobody()
    prefix = ["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", "--"]
    return cli_runner(cwd, prefix=prefix, base_env={**os.environ, "HOME": str(cwd)})


def victim(folder: Path, owner: tuple[int, int] | None = None) -> Path:
    """A file outside the output's folder, standing for a system file."""
    path = folder / "victim"
    path.write_text(VICTIM_TEXT)
    if owner is not None:
        os.chown(path, *owner)
    return path


def plant(link: Path, target: Path, owner: tuple[int, int] | None = None) -> None:
    link.symlink_to(target)
    if owner is not None:
        os.lchown(link, *owner)


def assert_untouched(target: Path, link: Path) -> None:
    assert target.read_text() == VICTIM_TEXT
    assert link.is_symlink() and link.readlink() == target


def assert_refused(result_stderr: str, returncode: int, link: Path, target: Path) -> None:
    said = " ".join(result_stderr.split())  # the message wraps between words
    assert returncode == 2, result_stderr
    assert f"{link} is a symbolic link to {target}" in said, said
    assert "does not write through it" in said
    assert "Traceback" not in result_stderr


def test_own_link_to_outside_file_is_replaced_never_followed(tmp_path: Path) -> None:
    assert_own_link_replaced(tmp_path)


def assert_own_link_replaced(folder: Path) -> None:
    """``-o reports/out.json`` where the user's own link there leads to ``folder/victim``."""
    target = victim(folder)
    (folder / "reports").mkdir()
    link = folder / "reports" / "out.json"
    plant(link, target)

    result = cli_runner(folder)(*REPORT, str(link))

    assert result.returncode == 0, result.stderr
    assert target.read_text() == VICTIM_TEXT  # the link's target is never opened
    assert not link.is_symlink()
    assert json.loads(link.read_text())["schema"] == "neuron-env/doctor-checks/v1"


def test_dangling_link_is_replaced_not_created_through(tmp_path: Path) -> None:
    (tmp_path / "reports").mkdir()
    link = tmp_path / "reports" / "out.json"
    plant(link, tmp_path / "created-elsewhere")

    result = cli_runner(tmp_path)(*REPORT, str(link))

    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "created-elsewhere").exists()
    assert not link.is_symlink()


@needs_root
def test_root_refuses_a_link_planted_in_a_shared_sticky_folder(shared_root: Path) -> None:
    target = victim(shared_root)
    shared = shared_root / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)  # like /tmp
    link = shared / "out.json"
    plant(link, target, owner=nobody())

    result = cli_runner(shared_root)(*REPORT, str(link))

    assert_refused(result.stderr, result.returncode, link, target)
    assert_untouched(target, link)


@needs_root
def test_root_refuses_a_link_another_user_made_in_their_folder(shared_root: Path) -> None:
    target = victim(shared_root)
    theirs = shared_root / "theirs"
    theirs.mkdir()
    link = theirs / "out.json"
    plant(link, target, owner=nobody())  # root's folder, nobody's link: not root's own

    result = cli_runner(shared_root)(*REPORT, str(link))

    assert_refused(result.stderr, result.returncode, link, target)
    assert_untouched(target, link)


@needs_root
def test_user_refuses_a_link_planted_in_a_shared_sticky_folder(shared_root: Path) -> None:
    target = victim(shared_root, owner=nobody())  # one the user could write: the link's bait
    shared = shared_root / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "out.json"
    plant(link, target)  # root's link, in a folder the user may write

    result = as_nobody(shared)(*REPORT, str(link))

    assert_refused(result.stderr, result.returncode, link, target)
    assert_untouched(target, link)


@needs_root
def test_user_replaces_own_link_and_leaves_its_target_alone(shared_root: Path) -> None:
    target = victim(shared_root, owner=nobody())
    home = shared_root / "home"
    home.mkdir()
    os.chown(home, *nobody())
    link = home / "out.json"
    plant(link, target, owner=nobody())

    result = as_nobody(home)(*REPORT, str(link))

    assert result.returncode == 0, result.stderr
    assert target.read_text() == VICTIM_TEXT
    assert not link.is_symlink() and link.stat().st_uid == nobody()[0]
    assert json.loads(link.read_text())["command"] == "doctor"


@needs_root
def test_root_rewriting_a_users_file_keeps_its_owner_and_mode(shared_root: Path) -> None:
    home = shared_root / "home"
    home.mkdir()
    report = home / "out.json"
    report.write_text("{}\n")
    report.chmod(0o640)
    os.chown(report, *nobody())

    result = cli_runner(shared_root)(*REPORT, str(report))

    assert result.returncode == 0, result.stderr
    after = report.stat()
    assert (after.st_uid, after.st_gid) == nobody()
    assert after.st_mode & 0o7777 == 0o640
    assert json.loads(report.read_text())["command"] == "doctor"


def test_writing_to_dev_stdout_still_writes_in_place(tmp_path: Path) -> None:
    result = cli_runner(tmp_path)(*REPORT, "/dev/stdout")

    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["command"] == "doctor"


def _report_to_redirected_stdout(
    tmp_path: Path, output: str, prefix: Sequence[str] = ()
) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``-o OUTPUT`` with the process's stdout redirected to a regular file (``> report.json``);
    that file."""
    redirected = tmp_path / "report.json"
    with redirected.open("w") as stdout:
        done = subprocess.run([*prefix, *cli_argv(*REPORT, output)], stdout=stdout,
                              stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=machine_env(),
                              timeout=60, check=False)  # fmt: skip
    return done, redirected


def test_dev_fd_1_redirected_to_a_file_writes_the_report_into_that_file(tmp_path: Path) -> None:
    """``-o /dev/fd/1 > report.json``: the descriptor's file is a regular one, but the report goes
    through the descriptor, not as a new file renamed over ``/dev/fd/1`` (that was exit 2)."""
    done, redirected = _report_to_redirected_stdout(tmp_path, "/dev/fd/1")

    assert done.returncode == 0, done.stderr
    assert json.loads(redirected.read_text())["command"] == "doctor"


@needs_root
def test_dev_stdout_redirected_to_a_file_is_written_through_never_replaced(
    tmp_path: Path,
) -> None:
    """``-o /dev/stdout > report.json`` as root: the report lands in report.json and
    ``/dev/stdout`` stays the system's link. It was replaced by a regular file holding the report
    (every later ``> /dev/stdout`` on the machine then wrote there) and report.json stayed empty.
    Run in a private mount namespace whose ``/dev`` is a scratch folder: a regression here
    damages that folder, not the machine."""
    scratch = tmp_path / "dev"
    scratch.mkdir()
    (scratch / "stdout").symlink_to("/proc/self/fd/1")
    bind = ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
            'mount --bind "$0" /dev && exec "$@"', str(scratch)]  # fmt: skip

    done, redirected = _report_to_redirected_stdout(tmp_path, "/dev/stdout", bind)

    assert done.returncode == 0, done.stderr
    assert json.loads(redirected.read_text())["command"] == "doctor"
    assert (scratch / "stdout").readlink() == Path("/proc/self/fd/1")


def test_own_link_on_a_tmpfs_under_dev_is_replaced_never_followed() -> None:
    """A folder of one's own on ``/dev/shm`` (a tmpfs, where CI jobs often write): a link at the
    output path is replaced like anywhere else. Its target's name starting with ``/dev/`` made it
    count as a stream, written in place through the link (and not whole: a signal mid-write left
    half a report)."""
    folder = Path(tempfile.mkdtemp(prefix="neuron-env-links-", dir="/dev/shm"))
    try:
        assert_own_link_replaced(folder)
    finally:
        shutil.rmtree(folder)


@needs_root
def test_a_step_summary_planted_as_a_link_is_refused(shared_root: Path) -> None:
    """``$GITHUB_STEP_SUMMARY`` is appended to, not replaced; a link planted there by another
    user in a shared folder is refused all the same."""
    target = victim(shared_root)
    shared = shared_root / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "step_summary.md"
    plant(link, target, owner=nobody())

    result = cli_runner(shared_root)(
        "doctor", "--format", "github", env={"GITHUB_STEP_SUMMARY": str(link)}
    )

    assert_refused(result.stderr, result.returncode, link, target)
    assert_untouched(target, link)


@needs_root
def test_root_refuses_a_folder_link_planted_in_a_shared_sticky_folder(shared_root: Path) -> None:
    """``-o /tmp/evil/out.json`` where another user planted ``/tmp/evil -> /etc``: refused
    before anything is created or written through the folder link."""
    outside = shared_root / "etc"
    outside.mkdir()
    target = victim(outside)
    shared = shared_root / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "evil"
    plant(link, outside, owner=nobody())

    for out in (link / "victim", link / "new" / "out.json"):
        result = cli_runner(shared_root)(*REPORT, str(out))

        assert_refused(result.stderr, result.returncode, link, outside)
        assert target.read_text() == VICTIM_TEXT
        assert sorted(p.name for p in outside.iterdir()) == ["victim"], out  # nothing created


@needs_root
def test_root_refuses_a_folder_link_another_user_made_in_their_folder(shared_root: Path) -> None:
    outside = shared_root / "etc"
    outside.mkdir()
    target = victim(outside)
    theirs = shared_root / "theirs"
    theirs.mkdir()
    link = theirs / "reports"
    plant(link, outside, owner=nobody())  # root's folder, nobody's link

    result = cli_runner(shared_root)(*REPORT, str(link / "victim"))

    assert_refused(result.stderr, result.returncode, link, outside)
    assert target.read_text() == VICTIM_TEXT


@needs_root
def test_user_refuses_a_folder_link_planted_in_a_shared_sticky_folder(shared_root: Path) -> None:
    outside = shared_root / "theirs"
    outside.mkdir()
    os.chown(outside, *nobody())  # a folder the user may write: the link's bait
    target = victim(outside, owner=nobody())
    shared = shared_root / "tmp"
    shared.mkdir()
    shared.chmod(0o1777)
    link = shared / "evil"
    plant(link, outside)  # root's link, in a folder the user may write

    result = as_nobody(shared)(*REPORT, "evil/victim")  # a relative path: the same rule

    assert_refused(result.stderr, result.returncode, link, outside)  # named in full
    assert target.read_text() == VICTIM_TEXT


@needs_root
def test_user_writes_through_own_folder_link_in_own_folder(shared_root: Path) -> None:
    home = shared_root / "home"
    home.mkdir()
    os.chown(home, *nobody())
    reports = shared_root / "reports"
    reports.mkdir()
    os.chown(reports, *nobody())
    link = home / "reports"
    plant(link, reports, owner=nobody())

    result = as_nobody(home)(*REPORT, str(link / "out.json"))

    assert result.returncode == 0, result.stderr
    assert json.loads((reports / "out.json").read_text())["command"] == "doctor"
