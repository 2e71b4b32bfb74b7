"""A signal while a command writes its files leaves each file whole: the old one, or the new one.

The real console script is held from the test side (``tests/support/pausing.py``) at the moment
its new text is written beside the target but not yet renamed over it (``-o`` of ``image render``
and ``launch-template render``), or between two files of ``scan --fix``, and gets a real SIGINT,
SIGTERM or SIGKILL there. A handled signal ends the run with exit 128 + the signal and one
``Interrupted`` line, leaving no temporary file; even a SIGKILL never leaves half a file.
"""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.cli import cli_argv, machine_env
from tests.support.pausing import paused_env, wait_until_paused

pytestmark = pytest.mark.integration

SIGNALS = [signal.SIGINT, signal.SIGTERM, signal.SIGKILL]
RENDERS = {
    "image": ["image", "render", "--torch", "2.14", "--neuron-env-source", "pypi"],
    "launch-template": [
        "launch-template", "render", "--release", "2.33.1", "--torch", "2.14",
        "--instance-type", "trn2.48xlarge", "--neuron-env-source", "pypi",
    ],
}  # fmt: skip
OLD = "# the file as the user left it\n"


@dataclass(frozen=True)
class Run:
    returncode: int
    stderr: str


def signalled_at(phase: str, argv: list[str], marks: Path, sig: int, cwd: Path) -> Run:
    """Run ``argv`` until it holds at ``phase``, send ``sig``, let it go on and wait for its end."""
    env = paused_env(machine_env(), phase, marks)
    proc = subprocess.Popen(cli_argv(*argv), env=env, cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        go = wait_until_paused(proc, phase, marks)
        proc.send_signal(sig)
        go.touch()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    return Run(proc.returncode, err)


def interrupted_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "Interrupted" in line]


def assert_ended_by(run: Run, sig: int) -> None:
    if sig == signal.SIGKILL:
        assert run.returncode == -signal.SIGKILL
        return
    assert run.returncode == 128 + sig, run.stderr
    assert len(interrupted_lines(run.stderr)) == 1, run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("command", list(RENDERS))
@pytest.mark.parametrize("existing", [True, False], ids=["over-a-file", "new-file"])
def test_a_signal_while_render_writes_its_output_leaves_the_old_file_or_none(
    tmp_path: Path, command: str, existing: bool, sig: signal.Signals
) -> None:
    out = tmp_path / "out" / "rendered"
    out.parent.mkdir()
    if existing:
        out.write_text(OLD)
    argv = [*RENDERS[command], "-o", str(out)]
    run = signalled_at("output-rename", argv, tmp_path / "marks", sig, tmp_path)
    assert_ended_by(run, sig)
    if existing:
        assert out.read_text() == OLD
    else:
        assert not out.exists()
    if sig != signal.SIGKILL:  # a handled signal removes the new text written beside the file
        assert [p.name for p in out.parent.iterdir()] == (["rendered"] if existing else [])


def test_an_output_file_is_replaced_whole_and_keeps_its_mode(tmp_path: Path) -> None:
    out = tmp_path / "Dockerfile"
    out.write_text(OLD)
    out.chmod(0o640)
    done = subprocess.run(cli_argv(*RENDERS["image"], "-o", str(out)), env=machine_env(),
                          capture_output=True, text=True, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("# A TorchNeuron container image")
    assert (out.stat().st_mode & 0o777, sorted(p.name for p in tmp_path.iterdir())) == (
        0o640,
        ["Dockerfile"],
    )


# --- scan --fix -------------------------------------------------------------------------------

BEFORE = "import torch\nimport torch_xla.core.xla_model as xm\n\ndevice = xm.xla_device()\n"


def two_scripts(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "a_train.py", tmp_path / "b_eval.py"]
    for path in files:
        path.write_text(BEFORE)
    return files


def fixed(path: Path) -> bool:
    return path.read_text() != BEFORE and "xla_device" not in path.read_text()


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_between_two_fixed_files_names_the_file_already_fixed(
    tmp_path: Path, sig: signal.Signals
) -> None:
    first, second = two_scripts(tmp_path)
    argv = ["scan", str(first), str(second), "--fix", "--yes"]
    run = signalled_at("fix-next", argv, tmp_path / "marks", sig, tmp_path)
    assert_ended_by(run, sig)
    assert fixed(first)
    assert second.read_text() == BEFORE
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a_train.py", "b_eval.py", "marks"]
    if sig != signal.SIGKILL:
        said = " ".join(run.stderr.split())
        assert "Interrupted after 1 of 2 files were fixed (a_train.py)" in said
        assert "Run the same command again to fix the rest." in said


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_a_fixed_file_is_written_leaves_it_as_it_was(
    tmp_path: Path, sig: signal.Signals
) -> None:
    first, second = two_scripts(tmp_path)
    argv = ["scan", str(first), str(second), "--fix", "--yes"]
    run = signalled_at("fix-rename", argv, tmp_path / "marks", sig, tmp_path)
    assert_ended_by(run, sig)
    assert (first.read_text(), second.read_text()) == (BEFORE, BEFORE)
    if sig != signal.SIGKILL:
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a_train.py", "b_eval.py", "marks"]
        assert "Interrupted after 0 of 2 files were fixed (none)" in " ".join(run.stderr.split())
