"""``neuron-env doctor`` and ``neuron-env facts`` options, formats and failure paths."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner, cli_argv, cli_runner, machine_env
from tests.support.hosts import Host, scenario_host
from tests.support.junit import assert_valid_junit, totals
from tests.support.pasted import in_fresh_shell

pytestmark = pytest.mark.integration

SNAPSHOTS = DATA / "snapshots"


@pytest.fixture
def healthy(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("healthy-trn2-ubuntu-26.04", tmp_path)


@pytest.fixture
def warning_host(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("kernel-headers-missing", tmp_path)


@pytest.fixture
def failing_host(tmp_path: Path) -> Iterator[Host]:
    yield from scenario_host("driver-not-loaded", tmp_path)


def test_healthy_host_text_report(cli: CliRunner, healthy: Host) -> None:
    result = cli(*healthy.args("doctor"), env=healthy.env)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "neuron-env doctor · trn2-node-01 (trn2.48xlarge)" in out
    assert "Judged against Neuron 2.33.1 (detected from torch-neuronx 2.14.3.0.2187" in out
    assert "✓ platform.os" in out and "Ubuntu 26.04 LTS: supported, pip wheels available" in out
    # torch-neuronx 2.14.3.0 carries the known issues Neuron 2.34.0 fixes: ready, with a warning
    assert out.rstrip().splitlines()[-1].startswith("Ready, with warnings: 21 ok, 1 warning")
    assert "! python.known-issues" in out and "Neuron 2.34.0 fixes" in out
    assert "\x1b[" not in out  # no colour codes in a pipe


def test_failures_show_the_fix_under_the_finding(cli: CliRunner, failing_host: Host) -> None:
    result = cli(*failing_host.args("doctor"), env=failing_host.env)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if "✗ driver.module" in line)
    assert lines[at + 1].strip() == "fix: sudo modprobe neuron"
    assert "Not ready:" in lines[-1]


def test_warnings_pass_unless_strict(cli: CliRunner, warning_host: Host) -> None:
    assert cli(*warning_host.args("doctor"), env=warning_host.env).returncode == 0
    strict = cli(*warning_host.args("doctor", "--strict"), env=warning_host.env)
    assert strict.returncode == 1
    assert "(--strict: warnings fail)" in strict.stdout


def test_verbose_shows_details_of_passing_checks(cli: CliRunner, healthy: Host) -> None:
    env = {**healthy.env, "NEURON_RT_LOG_LEVEL": "INFO"}
    plain = cli(*healthy.args("doctor"), env=env).stdout
    verbose = cli(*healthy.args("doctor", "-v"), env=env).stdout
    assert "NEURON_RT_LOG_LEVEL=INFO" not in plain
    assert "NEURON_RT_LOG_LEVEL=INFO" in verbose


def test_check_and_skip_select_checks(cli: CliRunner, failing_host: Host) -> None:
    only = cli(
        *failing_host.args("doctor", "--check", "platform.os", "--format", "json"),
        env=failing_host.env,
    )
    assert [f["check"] for f in json.loads(only.stdout)["findings"]] == ["platform.os"]
    assert only.returncode == 0
    skipped = cli(
        *failing_host.args("doctor", "--skip", "driver.module", "--skip", "driver.devices"),
        env=failing_host.env,
    )
    assert skipped.returncode == 0 and "driver.module" not in skipped.stdout


def test_unknown_check_id_is_bad_input_with_a_suggestion(cli: CliRunner, healthy: Host) -> None:
    result = cli(*healthy.args("doctor", "--check", "driver.modules"), env=healthy.env)
    assert result.returncode == 2
    assert "did you mean 'driver.module'?" in result.stderr


def test_list_checks_names_every_stable_id(cli: CliRunner) -> None:
    from neuron_env.checks.registry import CHECKS

    result = cli("doctor", "--list-checks")
    assert result.returncode == 0
    for check in CHECKS:
        assert check.id in result.stdout


def test_json_report_embeds_facts_that_doctor_can_judge_again(
    cli: CliRunner, failing_host: Host, tmp_path: Path
) -> None:
    report = tmp_path / "report.json"
    live = cli(
        *failing_host.args("doctor", "--format", "json", "--output", str(report)),
        env=failing_host.env,
    )
    assert live.returncode == 1 and live.stdout == ""
    doc = json.loads(report.read_text())
    assert doc["schema"] == "neuron-env/doctor/v1"
    assert doc["facts"]["os"]["version_id"] == "26.04"
    again = cli(
        "--matrix-dir",
        str(failing_host.matrix),
        "doctor",
        "--facts",
        str(report),
        "--format",
        "json",
    )
    assert again.returncode == 1
    assert json.loads(again.stdout)["findings"] == doc["findings"]


def test_facts_snapshot_judged_elsewhere_gives_the_same_verdict(
    cli: CliRunner, healthy: Host, tmp_path: Path
) -> None:
    snapshot = tmp_path / "host.json"
    made = cli("facts", "--sysroot", str(healthy.sysroot), "--python", str(healthy.python),
               "-o", str(snapshot), env=healthy.env)  # fmt: skip
    assert made.returncode == 0 and made.stdout == ""
    assert json.loads(snapshot.read_text())["schema"] == "neuron-env/facts/v1"
    judged = cli("--matrix-dir", str(healthy.matrix), "doctor", "--facts", str(snapshot))
    assert judged.returncode == 0
    assert "Ready, with warnings: 21 ok, 1 warning" in judged.stdout


def test_judging_against_a_release_and_torch_on_request(cli: CliRunner, healthy: Host) -> None:
    args = healthy.args("doctor", "--release", "2.33.0", "--torch", "2.13", "--format", "json")
    result = cli(*args, env=healthy.env)
    doc = json.loads(result.stdout)
    assert (doc["release"], doc["torch"]) == ("2.33.0", "2.13.0")
    assert doc["release_reason"] == "requested with --release"
    statuses = {f["check"]: f["status"] for f in doc["findings"]}
    assert statuses["python.torch"] == "fail"  # torch 2.14 is installed, 2.13 was asked for


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("truncated.json", "not valid JSON"),
        ("binary.json", "not valid JSON"),
        ("wrong-kind.json", "is not a neuron-env facts snapshot"),
        ("future-version.json", "schema version 2; this neuron-env reads version 1"),
        ("wrong-type.json", "facts.os.version_id: expected a string"),
    ],
)
def test_malformed_snapshot_is_bad_input_with_a_clear_message(
    cli: CliRunner, name: str, says: str
) -> None:
    result = cli("doctor", "--facts", str(SNAPSHOTS / name))
    assert result.returncode == 2
    assert says in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr


def test_missing_snapshot_and_conflicting_options_are_bad_input(
    cli: CliRunner, tmp_path: Path
) -> None:
    missing = cli("doctor", "--facts", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "Cannot read snapshot" in missing.stderr
    both = cli("doctor", "--facts", str(SNAPSHOTS / "truncated.json"), "--sysroot", str(tmp_path))
    assert both.returncode == 2 and "cannot be combined" in both.stderr
    assert cli("doctor", "--format", "yaml").returncode == 2


def test_junit_has_one_testcase_per_check(
    cli: CliRunner, failing_host: Host, tmp_path: Path
) -> None:
    out = tmp_path / "doctor.xml"
    cli(*failing_host.args("doctor", "--format", "junit", "-o", str(out)), env=failing_host.env)
    root = assert_valid_junit(out)
    assert root.tag == "testsuites" and totals(root)["failures"] == 2
    cases = {case.get("name"): case for case in root.iter("testcase")}
    assert len(cases) == 22
    failure = cases["driver.module"].find("failure")
    assert failure is not None and "fix: sudo modprobe neuron" in (failure.text or "")
    assert cases["platform.os"].find("failure") is None


def test_github_format_writes_the_step_summary_and_annotations(
    cli: CliRunner, failing_host: Host, tmp_path: Path
) -> None:
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    env = {**failing_host.env, "GITHUB_STEP_SUMMARY": str(summary)}
    result = cli(*failing_host.args("doctor", "--format", "github"), env=env)
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("::error title=neuron-env driver.module::")
    assert "%0Afix: sudo modprobe neuron" in result.stdout
    text = summary.read_text()
    assert text.startswith("earlier step\n### neuron-env doctor: FAIL")
    assert "| ❌ | `driver.devices` |" in text


def test_a_hung_target_python_is_a_probe_error_not_a_hang(
    cli: CliRunner, healthy: Host, tmp_path: Path
) -> None:
    hung = tmp_path / "python"
    hung.write_text("#!/bin/sh\nexec sleep 60\n")
    hung.chmod(hung.stat().st_mode | stat.S_IXUSR)
    result = cli(
        "--matrix-dir", str(healthy.matrix), "doctor", "--sysroot", str(healthy.sysroot),
        "--python", str(hung), "--probe-timeout", "2", "--format", "json",
        env=healthy.env, timeout=30,
    )  # fmt: skip
    assert result.returncode == 3  # nothing failed: could not judge, not "not ready"
    doc = json.loads(result.stdout)
    assert (doc["status"], doc["exit_code"]) == ("unknown", 3)
    findings = {f["check"]: f for f in doc["findings"]}
    assert findings["python.torch"]["status"] == "error"
    assert "Could not probe python" in findings["python.torch"]["summary"]
    assert findings["platform.os"]["status"] == "ok"  # the other probes' facts survive


def test_the_default_target_is_the_active_virtualenv(cli: CliRunner, healthy: Host) -> None:
    env = {**healthy.env, "VIRTUAL_ENV": str(healthy.python.parent.parent)}
    args = ["--matrix-dir", str(healthy.matrix), "doctor", "--sysroot", str(healthy.sysroot)]
    result = cli(*args, "--format", "json", env=env)
    assert json.loads(result.stdout)["facts"]["python"]["prefix"] == str(
        healthy.python.parent.parent
    )


def test_a_global_option_after_the_command_gets_a_hint(cli: CliRunner, tmp_path: Path) -> None:
    result = cli("doctor", "--matrix-dir", str(tmp_path), "--level", "0")
    assert result.returncode == 2
    assert "No such option: --matrix-dir" in result.stderr
    hint = result.stderr.splitlines()[-1]
    prefix = "Global options go before the command: "
    assert hint.startswith(prefix), result.stderr
    argv = shlex.split(hint.removeprefix(prefix))
    assert argv[1:] == ["--matrix-dir", str(tmp_path), "doctor", "--level", "0"]
    pasted = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=120)
    assert pasted.returncode in (0, 1), pasted.stderr  # judged: the options were accepted


def test_doctor_verbose_shows_what_each_passing_check_read_and_where(
    cli: CliRunner, healthy: Host
) -> None:
    plain = cli(*healthy.args("doctor"), env=healthy.env)
    verbose = cli(*healthy.args("doctor", "-v"), env=healthy.env)
    assert verbose.returncode == 0, verbose.stdout + verbose.stderr
    assert "read: " not in plain.stdout  # the plain report stays short
    blocks = re.split(r"\n  (?=[✓✗!?-] )", verbose.stdout)
    passed = {b.split()[1]: " ".join(b.split()) for b in blocks if b.startswith("✓ ")}
    assert len(passed) == 21
    for check, block in passed.items():
        assert "read: " in block, check
    assert f"read: {healthy.sysroot}/etc/os-release" in passed["platform.os"]
    target = f"read: {healthy.python}: its version and installed distributions"
    assert target in passed["python.torch"]


def test_a_fix_naming_a_release_from_matrix_dir_carries_it_into_a_fresh_shell(
    tmp_path: Path,
) -> None:
    """2.99.0 exists only in the extra matrix folder: a printed install that dropped
    ``--matrix-dir`` would fail as pasted with "unknown release"."""
    shutil.copytree(DATA / "matrices" / "newer", tmp_path / "extra")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    judged = cli_runner(tmp_path)("--matrix-dir", "extra", "doctor", "--format", "json")
    (step,) = json.loads(judged.stdout)["next"]
    assert "--release" in step["argv"] and "2.99.0" in step["argv"]
    assert step["argv"][1:3] == ["--matrix-dir", str(tmp_path / "extra")]  # absolute, first
    done = in_fresh_shell(step["shell"] + " --dry-run", elsewhere)
    assert "2.99.0" not in done.stderr, done.stderr  # the release is known there too
    assert done.returncode == 0 or "No Python 3.12" in done.stderr, done.stderr


def test_dash_o_says_when_it_creates_parent_folders(tmp_path: Path) -> None:
    run = cli_runner(tmp_path)
    first = run("doctor", "--format", "json", "-o", "reports/today/doctor.json")
    assert "Created the folder reports/today for the output." in first.stderr
    assert json.loads((tmp_path / "reports" / "today" / "doctor.json").read_text())["status"]
    again = run("doctor", "--format", "json", "-o", "reports/today/doctor.json")
    assert "Created the folder" not in again.stderr  # it is there now: nothing to say


def test_dash_o_under_a_file_says_the_folder_cannot_be_made(tmp_path: Path) -> None:
    (tmp_path / "notes").write_text("keep me\n")
    result = cli_runner(tmp_path)("doctor", "--format", "json", "-o", "notes/today/doctor.json")
    assert result.returncode == 2
    assert "Cannot create the folder notes/today: a part of it is a file." in result.stderr
    assert (tmp_path / "notes").read_text() == "keep me\n"  # nothing lost


@pytest.mark.parametrize(
    "args",
    [("doctor", "--format", "json"), ("facts",), ("scan", ".", "--format", "json")],
    ids=["doctor", "facts", "scan"],
)
def test_dash_as_the_output_is_stdout(tmp_path: Path, args: tuple[str, ...]) -> None:
    """``-o -`` wrote a file named ``-`` into the working directory and printed nothing."""
    (tmp_path / "train.py").write_text("import torch\n")

    result = cli_runner(tmp_path)(*args, "-o", "-")

    assert result.returncode in (0, 1), result.stderr
    assert json.loads(result.stdout)["command"] == args[0]
    assert not (tmp_path / "-").exists()


def _doctor_reading_stdin(matrix: Path, stdin: int | bytes) -> subprocess.CompletedProcess[bytes]:
    """``doctor --facts -`` with ``stdin`` as its standard input (bytes piped in, or a fd)."""
    argv = cli_argv("--matrix-dir", str(matrix), "doctor", "--facts", "-")
    if isinstance(stdin, bytes):
        return subprocess.run(argv, input=stdin, capture_output=True, env=machine_env(),
                              timeout=60, check=False)  # fmt: skip
    return subprocess.run(argv, stdin=stdin, capture_output=True, env=machine_env(), timeout=60,
                          check=False)  # fmt: skip


def test_a_snapshot_piped_to_facts_dash_is_judged_as_its_file(
    cli: CliRunner, healthy: Host, tmp_path: Path
) -> None:
    """``ssh node neuron-env facts | neuron-env doctor --facts -``: it said "Cannot read snapshot
    -: No such file or directory"."""
    made = cli("facts", "--sysroot", str(healthy.sysroot), "--python", str(healthy.python),
               env=healthy.env)  # fmt: skip
    from_file = tmp_path / "host.json"
    from_file.write_text(made.stdout)

    piped = _doctor_reading_stdin(healthy.matrix, made.stdout.encode())
    judged = cli("--matrix-dir", str(healthy.matrix), "doctor", "--facts", str(from_file))

    assert piped.returncode == judged.returncode == 0, piped.stderr
    assert "Ready, with warnings: 21 ok, 1 warning" in piped.stdout.decode()


@pytest.mark.parametrize(
    ("stdin", "said"),
    [(b"", "Cannot read snapshot stdin: empty: nothing was piped in."),
     (b"{" * 10 + b" " * (16 * 2**20), "Cannot read snapshot stdin: more than the 16.0 MiB "
      "allowed."),
     (b'{"schema": "neuron-env/facts/v1", "facts": ', "Cannot read snapshot stdin: not valid "
      "JSON")],
    ids=["empty", "too-large", "cut-off"],
)  # fmt: skip
def test_a_bad_snapshot_on_stdin_is_bad_input_naming_stdin(
    healthy: Host, stdin: bytes, said: str
) -> None:
    result = _doctor_reading_stdin(healthy.matrix, stdin)

    assert result.returncode == 2, result.stdout
    assert " ".join(result.stderr.decode().split()).startswith(f"error: {said}")


def test_facts_dash_on_a_terminal_says_so_instead_of_waiting(healthy: Host) -> None:
    main, terminal = os.openpty()
    try:
        result = _doctor_reading_stdin(healthy.matrix, terminal)
    finally:
        os.close(main)
        os.close(terminal)

    assert result.returncode == 2
    assert "reads a snapshot from stdin, which is a terminal here" in result.stderr.decode()
