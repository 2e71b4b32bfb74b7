"""Snapshots are hostile input: what they hold is shown, never acted on, and never sinks a report.

A snapshot is real ``neuron-env facts`` output from a scenario host, then edited the way an attacker
(or a broken host) would: a host name, a kernel string and a file name holding ``\\n::error …``
(a GitHub workflow command), ESC sequences (terminal title, clear screen), NUL and other bytes XML
cannot hold, line separators, a bidi override and a lone surrogate. Each output format of
``doctor --facts`` and ``fleet report`` must keep all of it inert; malformed and unbounded
snapshots are refused with exit 2 (doctor) or reported as unreadable (fleet), never a traceback.
"""

from __future__ import annotations

import base64
import gzip
import json
import os
import re
import time
import xml.etree.ElementTree as ET
from collections.abc import Callable
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from neuron_env.fleet.collect import CollectOptions, collect
from neuron_env.fleet.ssm import Invocation, SsmGateway
from tests.support.aws import launch_image
from tests.support.cli import DATA, CliRunner, Result, cli_runner
from tests.support.hosts import build_sysroot, build_target, imds_environment, load_scenario
from tests.support.junit import assert_valid_junit

pytestmark = pytest.mark.integration

PAYLOAD = (
    "\n::error title=pwned::injected\x1b]0;owned\x07\x1b[2J\x00\x0b\r\u2028\u2029\x85\u202e\ud800"
)
HOSTILE_FILE = "i-evil\n::error::file\x1b[2J\u2028"
# What a terminal or a CI log would act on: C0/C1 controls (bar newline), separators, bidi.
ACTING = re.compile(
    "[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
NO_SUMMARY = {"GITHUB_STEP_SUMMARY": ""}  # the Markdown goes to stdout, even on GitHub Actions
OUR_COMMAND = re.compile(r"::(error|warning) title=neuron-env [a-z.\-]+::")


@pytest.fixture(scope="module")
def snapshot(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """A real snapshot of a host whose warning's summary and fix quote the kernel string."""
    root = tmp_path_factory.mktemp("host")
    scenario = load_scenario("kernel-headers-missing")
    sysroot, python = build_sysroot(scenario, root), build_target(scenario, root)
    out = root / "snapshot.json"
    with imds_environment(scenario) as env:
        result = cli_runner(root)(
            "facts", "--sysroot", str(sysroot), "--python", str(python), "-o", str(out), env=env
        )
    assert result.returncode == 0, result.stderr
    doc: dict[str, object] = json.loads(out.read_text())
    return doc


def hostile(snapshot: dict[str, object]) -> dict[str, object]:
    doc: dict[str, Any] = json.loads(json.dumps(snapshot))
    doc["facts"]["hostname"] = "node-01" + PAYLOAD
    doc["facts"]["os"]["kernel"] = "6.17.0-1004-aws" + PAYLOAD
    return doc


@pytest.fixture(scope="module")
def fleet(snapshot: dict[str, object], tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fleet")
    for name in (HOSTILE_FILE, "i-plain"):
        (folder / f"{name}.json").write_text(json.dumps(hostile(snapshot)))
    return folder


def assert_inert(output: str) -> None:
    """No byte acts on a terminal, and the only workflow commands are neuron-env's own."""
    assert not ACTING.findall(output)
    for line in output.splitlines():
        if line.lstrip().startswith("::"):
            assert OUR_COMMAND.match(line.lstrip()), line
    assert "\\x1b" in output or "\\u001b" in output  # shown, visibly, rather than dropped


@pytest.mark.parametrize("output_format", ["text", "json", "junit", "github"])
def test_doctor_shows_hostile_values_inertly_in_every_format(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path, output_format: str
) -> None:
    path = tmp_path / "host.json"
    path.write_text(json.dumps(hostile(snapshot)))
    result = cli("doctor", "--facts", str(path), "--format", output_format, "-v", env=NO_SUMMARY)
    assert result.returncode == 1, result.stderr  # a real failure (Python 3.11), judged
    assert "Traceback" not in result.stderr
    assert_inert(result.stdout)
    check_format(result.stdout, output_format, tmp_path)
    if output_format == "json":  # data keeps its value; only its display is escaped
        assert json.loads(result.stdout)["facts"]["hostname"] == "node-01" + PAYLOAD


# The text report's sinks: a pipe gets plain text written without rich; COLUMNS or FORCE_COLOR
# (and a terminal) make rich print it, the latter in colour; a file gets the plain text too.
TEXT_SINKS = {
    "pipe": {"COLUMNS": None, "NO_COLOR": None},
    "pipe, COLUMNS": {"COLUMNS": "100"},
    "pipe, FORCE_COLOR": {"COLUMNS": None, "NO_COLOR": None, "FORCE_COLOR": "1"},
}
SGR = re.compile("\x1b\\[[0-9;]*m")  # colour, the only escape sequence neuron-env writes


@pytest.mark.parametrize("sink", [*TEXT_SINKS, "file"])
def test_doctor_text_is_inert_wherever_it_goes(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path, sink: str
) -> None:
    path = tmp_path / "host.json"
    path.write_text(json.dumps(hostile(snapshot)))
    out = tmp_path / "report.txt"
    args = ["doctor", "--facts", str(path), "-v", *(["-o", str(out)] if sink == "file" else [])]
    result = cli(*args, env=TEXT_SINKS.get(sink, {}))
    assert result.returncode == 1, result.stderr
    text = out.read_text() if sink == "file" else result.stdout
    if sink.endswith("FORCE_COLOR"):
        assert SGR.search(text)  # coloured: and colour is all that acts
        text = SGR.sub("", text)
    assert_inert(text)
    check_format(text, "text", tmp_path)


@pytest.mark.parametrize("output_format", ["text", "json", "junit", "github"])
def test_fleet_report_shows_hostile_names_inertly_in_every_format(
    cli: CliRunner, fleet: Path, tmp_path: Path, output_format: str
) -> None:
    result = cli("fleet", "report", str(fleet), "--format", output_format, "-v")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert_inert(result.stdout)
    check_format(result.stdout, output_format, tmp_path)
    if output_format == "json":
        names = {h["name"] for h in json.loads(result.stdout)["hosts"]}
        assert names == {HOSTILE_FILE, "i-plain"}


def check_format(output: str, output_format: str, tmp_path: Path) -> None:
    if output_format == "junit":
        report = tmp_path / "report.xml"
        report.write_text(output)
        ET.parse(report)
        assert_valid_junit(report)
    if output_format == "github":
        for row in (line for line in output.splitlines() if line.startswith("|")):
            assert row.endswith("|"), row  # a newline in a value never ends a table row
    if output_format == "text":
        assert "\\x1b]0;owned" in output  # the ESC sequence is there to read, not to run


def test_a_path_with_escape_sequences_is_shown_not_run(cli: CliRunner, tmp_path: Path) -> None:
    result = cli("doctor", "--facts", str(tmp_path / "\x1b]0;owned\x07\x1b[2J.json"))
    assert result.returncode == 2
    assert not ACTING.findall(result.stderr)
    assert "\\x1b]0;owned" in result.stderr


# --- malformed and unbounded snapshots --------------------------------------------------------


def _write(text: str) -> Callable[[Path], None]:
    def write(path: Path) -> None:
        path.write_text(text)

    return write


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _dev_zero(path: Path) -> None:
    path.symlink_to("/dev/zero")


def _directory(path: Path) -> None:
    path.mkdir()


def _oversized(path: Path) -> None:
    with path.open("wb") as handle:
        handle.truncate(17 << 20)  # sparse: 17 MiB that cost nothing to write


def _not_utf8(path: Path) -> None:
    path.write_bytes(b'{"schema": "neuron-env/facts/v1", "facts": {"hostname": "\xff\xfe"}}')


FACTS = '"facts": {"collected_at": "2026-12-01T10:00:00+00:00", "sysroot": "/"'
BAD_SNAPSHOTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "schema-is-an-int": (_write('{"schema": 1, "facts": {}}'), "'schema' is not a string"),
    "schema-is-a-list": (_write('{"schema": ["x"], "facts": {}}'), "'schema' is not a string"),
    "nested-10000-deep": (
        _write('{"schema": "neuron-env/facts/v1", "x": ' + "[" * 10_000 + "]" * 10_000 + "}"),
        "nested more than 64 levels deep",
    ),
    "nested-100-deep": (
        _write('{"schema": "neuron-env/facts/v1", "x": ' + "[" * 100 + "]" * 100 + "}"),
        "nested more than 64 levels deep",
    ),
    "5000-digit-integer": (
        _write(
            '{"schema": "neuron-env/facts/v1", ' + FACTS + ', "duration_s": 9' + "9" * 4999 + "}}"
        ),
        "an integer of 5000 digits",
    ),
    "huge-string": (
        _write(
            '{"schema": "neuron-env/facts/v1", ' + FACTS + ', "hostname": "' + "x" * 70_000 + '"}}'
        ),
        "a string of 70,000 characters",
    ),
    "fifo": (_fifo, "not a regular file but a FIFO"),
    "dev-zero": (_dev_zero, "not a regular file but a character device"),
    "directory": (_directory, "not a regular file but a directory"),
    "over-16-mib": (_oversized, "more than the 16.0 MiB allowed"),
    "not-utf-8": (_not_utf8, "not UTF-8"),
}


def run_quickly(cli: CliRunner, *args: str) -> tuple[Result, float]:
    start = time.monotonic()
    result = cli(*args, timeout=30)  # a FIFO used to block here forever
    return result, time.monotonic() - start


# (doctor --facts DIR is refused by the option parser itself, before anything is read)
@pytest.mark.parametrize("case", sorted(set(BAD_SNAPSHOTS) - {"directory"}))
def test_a_bad_snapshot_is_bad_input_in_one_paragraph(
    cli: CliRunner, tmp_path: Path, case: str
) -> None:
    make, says = BAD_SNAPSHOTS[case]
    path = tmp_path / f"{case}.json"
    make(path)
    result, took = run_quickly(cli, "doctor", "--facts", str(path))
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert says in " ".join(result.stderr.split())
    # one paragraph (plus its hint): no blank line, a few lines however long the path is
    assert "\n\n" not in result.stderr and len(result.stderr.splitlines()) <= 6
    assert took < 10


def test_fleet_report_judges_the_rest_when_snapshots_are_bad(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path
) -> None:
    folder = tmp_path / "fleet"
    folder.mkdir()
    (folder / "i-good.json").write_text(json.dumps(snapshot))
    for case, (make, _) in BAD_SNAPSHOTS.items():
        make(folder / f"{case}.json")
    result, took = run_quickly(cli, "fleet", "report", str(folder), "--format", "json")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    doc = json.loads(result.stdout)
    assert [h["name"] for h in doc["hosts"]] == ["i-good"]
    missing = {m["name"]: m["reason"] for m in doc["missing"]}
    assert set(missing) == set(BAD_SNAPSHOTS)
    for case, (_, says) in BAD_SNAPSHOTS.items():
        assert missing[case].startswith("unreadable snapshot"), case
        assert says in missing[case], case
    assert took < 15


def test_a_fifo_as_the_record_of_hosts_not_collected_does_not_block(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path
) -> None:
    (tmp_path / "i-good.json").write_text(json.dumps(snapshot))
    os.mkfifo(tmp_path / "_not-collected.json")
    result, _ = run_quickly(cli, "fleet", "report", str(tmp_path), "--format", "json")
    missing = json.loads(result.stdout)["missing"]
    assert "not a regular file but a FIFO" in missing[0]["reason"]


class HostileHosts(SsmGateway):
    """Real EC2 calls against moto; every instance answers with the same crafted output."""

    def __init__(self, ec2: Any, ssm: Any, answer: str) -> None:
        super().__init__(ec2, ssm)
        self.answer = answer

    def managed(self, ids: list[str]) -> set[str]:  # type: ignore[override]
        return set(ids)

    def send(self, ids: Any, script: Any, **kwargs: Any) -> str:
        return "command-1"

    def invocation(self, command_id: str, instance_id: str) -> Invocation:
        return Invocation("Success", 0, self.answer)


@pytest.mark.parametrize(
    ("document", "says"),
    [
        ('{"schema": "neuron-env/facts/v1", "x": ' + "[" * 10_000 + "]" * 10_000 + "}", "nested"),
        ('{"schema": 7, "facts": {}}', "'schema' is not a string"),
        ('{"schema": "neuron-env/facts/v1", "n": 1' + "0" * 30 + "}", "an integer of 31 digits"),
    ],
)
def test_fleet_collect_records_a_hostile_answer_and_keeps_going(
    tmp_path: Path, document: str, says: str
) -> None:
    answer = base64.b64encode(gzip.compress(document.encode())).decode()
    with mock_aws():
        ec2 = boto3.client("ec2", region_name="us-east-2")
        image = launch_image(ec2)
        ec2.run_instances(ImageId=image, MinCount=2, MaxCount=2, InstanceType="trn2.48xlarge")
        gateway = HostileHosts(ec2, boto3.client("ssm", region_name="us-east-2"), answer)
        ids = tuple(gateway.instances((), ()))
        result = collect(gateway, CollectOptions(instance_ids=ids), tmp_path, sleep=lambda _: None)
    assert result.collected == []
    assert [m.name for m in result.missing] == list(ids)
    assert all(says in m.reason for m in result.missing)
    assert not list(tmp_path.glob("i-*.json"))  # nothing unusable is stored as a snapshot


def test_fleet_collect_shows_a_hosts_stderr_inertly_and_a_pastable_next_step(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from neuron_env.fleet.cli import _print_collect
    from neuron_env.fleet.collect import CollectResult
    from neuron_env.fleet.model import Missing

    reason = "command failed (exit 1): \x1b]0;owned\x07\x1b[2J ::error::from-the-host"
    folder = tmp_path / "my snapshots"
    _print_collect(CollectResult([], [], [Missing("i-1", reason)]), folder, as_json=False)
    out = capsys.readouterr().out
    assert_inert(out)
    from neuron_env.invocation import program

    assert f"Next: {program()} fleet report '{folder}'" in " ".join(out.split())


def test_fleet_report_refuses_a_torch_no_release_pairs_once(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path
) -> None:
    (tmp_path / "i-1.json").write_text(json.dumps(snapshot))
    result = cli("fleet", "report", str(tmp_path), "--torch", "1.0")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "No known Neuron release pairs torch-neuronx with PyTorch 1.0" in message


def test_a_host_whose_release_cannot_pair_the_asked_torch_is_not_ready_not_fatal(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path
) -> None:
    for name in ("i-1", "i-2"):
        (tmp_path / f"{name}.json").write_text(json.dumps(snapshot))
    newer = DATA / "matrices" / "newer"  # 2.99.0 pairs torch 2.15; the hosts run 2.33.1
    result = cli("--matrix-dir", str(newer), "fleet", "report", str(tmp_path), "--torch", "2.15",
                 "--format", "json")  # fmt: skip
    assert result.returncode == 1, result.stderr
    report = json.loads(result.stdout)
    assert report["missing"] == []  # judged, each against the newest release pairing torch 2.15
    assert {(h["name"], h["release"], h["status"]) for h in report["hosts"]} == {
        ("i-1", "2.99.0", "fail"),
        ("i-2", "2.99.0", "fail"),
    }


@pytest.mark.parametrize("package", ["torch", "torch-neuronx"])
def test_a_forged_version_string_is_no_version(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path, package: str
) -> None:
    doc = json.loads(json.dumps(snapshot))
    dists = doc["facts"]["python"]["distributions"]
    real = dists[package]["version"]
    dists[package]["version"] = real + "\n::error::forged"  # starts like the right version
    path = tmp_path / "host.json"
    path.write_text(json.dumps(doc))
    result = cli("doctor", "--facts", str(path), "--check", f"python.{package}", "--format", "json")
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["status"] == "fail", finding
    assert result.returncode == 1


def test_emoji_codes_in_hostile_values_are_shown_as_written(
    cli: CliRunner, snapshot: dict[str, object], tmp_path: Path
) -> None:
    """Rich would turn ``:thumbs_up:`` into an emoji: a host name is shown as it is, in text."""
    doc = json.loads(json.dumps(snapshot))
    doc["facts"]["hostname"] = "node-:thumbs_up:"
    folder = tmp_path / "fleet"
    folder.mkdir()
    (folder / "i-:thumbs_up:.json").write_text(json.dumps(doc))
    doctor = cli("doctor", "--facts", str(folder / "i-:thumbs_up:.json"), "-v")
    fleet = cli("fleet", "report", str(folder), "-v")
    for result in (doctor, fleet):
        assert result.returncode == 1, result.stderr
        assert "\U0001f44d" not in result.stdout
    assert "node-:thumbs_up:" in doctor.stdout
    assert "i-:thumbs_up:" in fleet.stdout
