"""A full disk is said in words, whichever step hit it (copying the venv, or the backend)."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path

from neuron_env.install.diagnose import explain
from neuron_env.install.transaction import describe_os_error
from tests.support.install_fixtures import plan_for


def test_a_full_disk_while_copying_the_environment_is_not_a_list_repr(tmp_path: Path) -> None:
    # What shutil.copytree raises when files fail to copy: one shutil.Error with a list.
    failure = shutil.Error(
        [
            (str(tmp_path / "env/lib/a.so"), str(tmp_path / "stage/a.so"),
             "[Errno 28] No space left on device"),
            (str(tmp_path / "env/lib/b.so"), str(tmp_path / "stage/b.so"),
             "[Errno 28] No space left on device"),
        ]
    )  # fmt: skip
    message = describe_os_error(failure)
    assert (
        message
        == f"The disk is full (No space left on device) while copying {tmp_path}/env/lib/a.so."
    )
    assert "[(" not in message


def test_a_full_disk_on_one_write_names_the_file() -> None:
    failure = OSError(errno.ENOSPC, "No space left on device", "/srv/.e-stage/venv/bin/python")
    assert describe_os_error(failure) == (
        "The disk is full (No space left on device) while writing /srv/.e-stage/venv/bin/python."
    )


def test_other_copy_failures_name_the_first_file_and_count_the_rest() -> None:
    failure = shutil.Error([("/a", "/b", "Permission denied"), ("/c", "/d", "Permission denied")])
    assert describe_os_error(failure) == "Copying /a failed: Permission denied (and 1 more)."


def test_a_backend_that_ran_out_of_space_says_the_disk_is_full() -> None:
    # uv's words for ENOSPC while unpacking a wheel into its cache.
    output = (
        "error: Failed to install: torch-2.14.0+cpu-cp312-cp312-manylinux_2_28_x86_64.whl\n"
        "  Caused by: failed to write to file `/root/.cache/uv/archive-v0/x/torch/lib.so`: "
        "No space left on device (os error 28)\n"
    )
    cause = explain(output, plan_for())
    assert cause.code == "disk-full"
    assert cause.message == "the disk is full (No space left on device)."
    assert "Free space" in cause.hint
