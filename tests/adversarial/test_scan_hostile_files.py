"""`neuron-env scan` against hostile files: pipes, devices, link tricks, huge or absurd input,
and `--fix` under a crash, a race with the editor, or a link out of the tree (issue 13).

Each test runs the real console script on a real file of that kind and asserts what the user sees:
exit 2 with one clear message (never "Checked 0 files … no findings"), a `scan-error` finding for a
bad file inside a directory, and a file on disk that is either the old one or the fixed one.
"""

from __future__ import annotations

import ast
import io
import json
import os
import resource
import subprocess
import time
from pathlib import Path

import pytest

from tests.support.cli import NEURON_ENV, CliRunner, cli_argv

pytestmark = pytest.mark.integration

XLA_SCRIPT = (
    "import torch\n"
    "import torch_xla.core.xla_model as xm\n"
    "\n"
    "device = xm.xla_device()\n"
    + "".join(f"x{i} = torch.ones({i}).to('xla')\n" for i in range(200))
)


def env() -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    return {**base, "NO_COLOR": "1", "COLUMNS": "160", "PYTHONDONTWRITEBYTECODE": "1"}


def assert_bad_input(result: object, *phrases: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)  # type: ignore[attr-defined]
    stderr: str = result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in stderr
    assert "Checked 0 files" not in result.stdout  # type: ignore[attr-defined]
    for phrase in phrases:
        assert phrase in stderr


# --- what is not a source file -----------------------------------------------------------------


def test_a_fifo_is_bad_input_and_does_not_block(cli: CliRunner, tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "train.py")  # nobody ever writes to it: reading would block forever
    result = cli("scan", "train.py", timeout=30)
    assert_bad_input(result, "train.py: a FIFO or pipe, not a source file", "neuron-env scan FILE")


def test_process_substitution_is_bad_input(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("import torch_xla\n")
    command = f"{NEURON_ENV} scan <(cat train.py)"
    result = subprocess.run(
        ["bash", "-c", command], cwd=tmp_path, env=env(), capture_output=True, text=True, timeout=30
    )
    assert_bad_input(result, "a FIFO or pipe, not a source file")


def test_dev_zero_is_bad_input(cli: CliRunner) -> None:
    assert_bad_input(cli("scan", "/dev/zero", timeout=30), "/dev/zero: a character device")


def test_a_symlink_loop_is_bad_input(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "a.py").symlink_to(tmp_path / "b.py")
    (tmp_path / "b.py").symlink_to(tmp_path / "a.py")
    assert_bad_input(cli("scan", "a.py"), "a.py: a loop of symbolic links")


def test_a_fifo_or_a_loop_inside_a_directory_is_a_scan_error_not_a_hang(
    cli: CliRunner, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    os.mkfifo(project / "pipe.py")
    (project / "loop.py").symlink_to(project / "loop.py")
    (project / "train.py").write_text("import torch_xla\n")
    doc = json.loads(cli("scan", "project", "--format", "json", timeout=30).stdout)
    problems = {f["path"]: f["message"] for f in doc["findings"] if f["rule"] == "scan-error"}
    assert problems["project/pipe.py"] == "not a regular file (a FIFO or pipe)"
    assert "Too many levels of symbolic links" in problems["project/loop.py"]
    assert any(f["rule"] == "xla-import" for f in doc["findings"])


@pytest.mark.parametrize(
    ("name", "content", "line"),
    [
        ("launch.sh", b"# caf\xe9 \x1b[31m::error::x\nexport NEURON_PJRT_PROCESS_INDEX=0\n", 2),
        ("Dockerfile", b"FROM ubuntu:24.04\n# \xff\xfe\nENV NEURON_PJRT_PROCESS_INDEX=0\n", 3),
        ("job.yaml", b"# \xc3\nenv:\n  - name: NEURON_PJRT_PROCESS_INDEX\n    value: '0'\n", 3),
    ],
)
def test_a_launch_file_with_a_stray_non_utf8_byte_is_still_read(
    cli: CliRunner, tmp_path: Path, name: str, content: bytes, line: int
) -> None:
    # Shell, Dockerfile and YAML files declare no encoding; a Latin-1 comment must not turn the
    # file into "not valid Python" and hide the variable below it.
    (tmp_path / name).write_bytes(content)
    doc = json.loads(cli("scan", name, "--format", "json").stdout)
    assert [(f["rule"], f["line"]) for f in doc["findings"]] == [("xla-pjrt-env", line)]


def test_a_file_over_10_mib_is_a_scan_error(cli: CliRunner, tmp_path: Path) -> None:
    (tmp_path / "huge.py").write_bytes(b"x = 1\n" * (2 * 1024 * 1024))  # 12 MiB
    doc = json.loads(cli("scan", "huge.py", "--format", "json").stdout)
    (finding,) = doc["findings"]
    assert finding["rule"] == "scan-error"
    assert finding["message"].startswith("larger than 10 MiB (12,582,912 bytes)")


def test_100000_unary_minuses_are_a_file_that_cannot_be_parsed(
    cli: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "deep.py").write_text("import torch\nx = " + "-" * 100_000 + "1\n")
    result = cli("scan", "deep.py", "--format", "json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["rule"] == "scan-error"
    assert finding["message"] == "cannot be parsed: nested too deeply"


# --- --fix: atomic, inside the tree, not over an edit, valid Python ---------------------------


def test_fix_that_fails_mid_write_leaves_the_old_file(tmp_path: Path) -> None:
    """A full disk, as the kernel reports it: any file write past 1,000 bytes fails (EFBIG)."""
    target = tmp_path / "train.py"
    target.write_text(XLA_SCRIPT)

    def limit_writes() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (1000, 1000))

    proc = subprocess.run(
        cli_argv("scan", "train.py", "--fix", "--yes"),
        cwd=tmp_path,
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_writes,  # the limit applies to the child only
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "Cannot write train.py: File too large; the file is unchanged." in proc.stderr
    assert target.read_text() == XLA_SCRIPT  # not a 0-byte or half-written file
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train.py"]  # no temporary file left


def test_fix_writes_a_new_file_with_the_same_mode(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_text(XLA_SCRIPT)
    target.chmod(0o751)
    before = target.stat().st_ino
    assert cli("scan", "train.py", "--fix", "--yes").returncode == 0  # all of it migrated
    assert "'neuron'" in target.read_text()
    assert target.stat().st_mode & 0o777 == 0o751
    assert target.stat().st_ino != before  # renamed into place, not rewritten in place


def test_fix_does_not_follow_a_link_out_of_the_tree(cli: CliRunner, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere" / "shared.py"
    outside.parent.mkdir()
    outside.write_text(XLA_SCRIPT)
    project = tmp_path / "project"
    project.mkdir()
    (project / "shared.py").symlink_to(outside)
    (project / "train.py").write_text(XLA_SCRIPT)
    result = cli("scan", "project", "--fix", "--yes")
    assert outside.read_text() == XLA_SCRIPT
    assert "Not fixed: project/shared.py: it is reached through a symbolic link" in result.stdout
    assert "'neuron'" in (project / "train.py").read_text()


def test_fix_through_a_link_inside_the_tree_writes_the_file_and_keeps_the_link(
    cli: CliRunner, tmp_path: Path
) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    real = project / "src" / "train.py"
    real.write_text(XLA_SCRIPT)
    (project / "train.py").symlink_to(real)
    assert cli("scan", "project/train.py", "--fix", "--yes").returncode == 0
    assert (project / "train.py").is_symlink()
    assert "'neuron'" in real.read_text()


def test_fix_refuses_to_overwrite_an_edit_saved_while_the_question_waits(tmp_path: Path) -> None:
    import pty

    target = tmp_path / "train.py"
    target.write_text(XLA_SCRIPT)
    controller, terminal = pty.openpty()
    with subprocess.Popen(
        cli_argv("scan", "train.py", "--fix"),
        stdin=terminal,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=tmp_path,
        env=env(),
    ) as proc:
        assert isinstance(proc.stdout, io.BufferedReader)
        seen = b""
        while b"[y/N]" not in seen:  # the question is on screen: now the user edits the file
            chunk = proc.stdout.read1(4096)
            assert chunk, seen
            seen += chunk
        edited = XLA_SCRIPT + "# saved from the editor meanwhile\n"
        target.write_text(edited)
        os.write(controller, b"y\n")
        rest, _ = proc.communicate(timeout=60)
    os.close(controller)
    os.close(terminal)
    output = (seen + rest).decode()
    assert target.read_text() == edited
    assert "Not written: train.py changed after it was scanned" in output
    assert "Applied" not in output


def test_fix_inside_an_f_string_stays_valid_for_python_3_10(cli: CliRunner, tmp_path: Path) -> None:
    target = tmp_path / "train.py"
    target.write_text(
        "import torch\nimport torch_xla.core.xla_model as xm\n"
        'print(f"running on {xm.xla_device()}")\n'
    )
    assert cli("scan", "train.py", "--fix", "--yes").returncode in (0, 1)
    fixed = target.read_text()
    assert "print(f\"running on {torch.device('neuron')}\")" in fixed
    ast.parse(fixed, feature_version=(3, 10))
    compile(fixed, "train.py", "exec")  # and on the Python running the tests (3.11)


def test_the_grammar_check_refuses_pep_701_quotes_for_older_pythons() -> None:
    from neuron_env.scan.grammar import grammar_problem

    nested = 'x = f"{d("k")}"\n'
    assert grammar_problem("x = f\"{d('k')}\"\n", (3, 10)) == ""
    assert grammar_problem(nested, (3, 10)) != ""
    assert grammar_problem("x = (\n", (3, 10)).startswith("line 1:")


def test_the_fifo_check_does_not_wait_for_a_writer(tmp_path: Path) -> None:
    from neuron_env.scan.source import NotASourceFile, read_bounded

    os.mkfifo(tmp_path / "pipe.py")
    started = time.monotonic()
    with pytest.raises(NotASourceFile, match="a FIFO or pipe"):
        read_bounded(tmp_path / "pipe.py")
    assert time.monotonic() - started < 5


def test_control_characters_in_a_file_name_never_reach_the_terminal(
    cli: CliRunner, tmp_path: Path
) -> None:
    (tmp_path / "a\x1b]0;pwned\x07b.py").write_text("import torch_xla\n")
    result = cli("scan", ".")
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "a\\x1b]0;pwned\\x07b.py:1:8: error xla-import" in result.stdout
