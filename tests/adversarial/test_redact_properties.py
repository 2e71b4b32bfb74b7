"""``--redact`` leaves nothing a user must not publish, wherever it stands (issue 38 §3).

A real facts snapshot (``tests/data/snapshots/torch-2.13-container.json``) gets one thing a user
must not paste into a public issue, planted by ``hypothesis`` into any of its text fields (a
path, an environment variable, a pip URL, the neuron-ls output, ...), alone or inside other text.
The snapshot is then shown as ``facts --redact`` shows it (JSON, and the Markdown bug report of
``--format text``), judged and shown as ``doctor --facts FILE --redact`` shows it (text, JSON,
JUnit, GitHub), and judged as one host of a fleet as ``fleet report DIR --redact`` shows it
(text, JSON, JUnit, GitHub, HTML): the planted value appears in none of them, not even split
across a wrapped line, and every document still parses.

The planted values copy their real shapes: AWS's documented example keys (``AKIAIOSFODNN7EXAMPLE``,
``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``), an S3 SigV4 presigned URL, EC2's private DNS names
(``ip-10-0-1-23.ec2.internal``), an IAM role ARN, a JWT bearer token.
"""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from neuron_env.errors import MalformedFile
from tests.conftest import DATA, CliRunner

SNAPSHOT = json.loads((DATA / "snapshots" / "torch-2.13-container.json").read_text())
PRESIGNED = (
    "https://models.s3.us-east-2.amazonaws.com/llama.bin?X-Amz-Algorithm=AWS4-HMAC-SHA256"
    "&X-Amz-Credential=ASIAY34FZKBOKMUTVV7A%2F20261207%2Fus-east-2%2Fs3%2Faws4_request"
    "&X-Amz-Security-Token=FwoGZXIvYXdzEJr%2F%2F%2F%2FwEaDPlantedSessionToken"
    "&X-Amz-Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
)
# kind: (what is planted, the parts of it that must not survive)
KINDS: dict[str, tuple[str, tuple[str, ...]]] = {
    "ipv4-port": ("10.11.12.13:8443", ("10.11.12.13",)),
    "ipv6-port": ("[fd00:ec2::254]:8080", ("fd00:ec2::254",)),
    "ipv6": ("2600:1f14:abc:de00:1234:5678:9abc:def0", ("2600:1f14:abc:de00",)),
    "host-port": ("build-cache.corp.example:5000", ("build-cache.corp.example",)),
    "presigned-url": (
        PRESIGNED,
        ("FwoGZXIvYXdzEJr", "5d672d79c15b13162d92", "ASIAY34FZKBOKMUTVV7A"),
    ),
    "access-key-id": ("AKIAIOSFODNN7EXAMPLE", ("AKIAIOSFODNN7EXAMPLE",)),
    "session-key-id": ("ASIAY34FZKBOKMUTVV7A", ("ASIAY34FZKBOKMUTVV7A",)),
    "secret-key": ("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ("wJalrXUtnFEMI",)),
    "secret-variable": ("AWS_SECRET_ACCESS_KEY=hunter2hunter2", ("hunter2",)),
    "bearer-token": (
        "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ1c2VyIn0.c2lnbmF0dXJl",
        ("eyJhbGciOiJIUzI1NiJ9",),
    ),
    "instance-id": ("i-0abcdef1234567890", ("0abcdef1234567890",)),
    "account-in-arn": ("arn:aws:iam::123456789012:role/Trainer", ("123456789012",)),
    "private-dns": ("ip-10-0-1-23.ec2.internal", ("10-0-1-23",)),
    "private-dns-regional": ("ip-172-31-5-9.us-west-2.compute.internal", ("172-31-5-9",)),
    "home-path": ("/home/alice/venvs/neuron", ("alice",)),
    "running-users-home": ("/data/users/carol/cache", ("carol",)),
}
AROUND = st.sampled_from([("", ""), ("see ", "."), ("x=", ";y"), ("(", ")"), ("'", "'")])


def text_places(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in ``doc`` that holds a string."""
    if isinstance(doc, str):
        return [at]
    if isinstance(doc, dict):
        return [place for key, value in doc.items() for place in text_places(value, (*at, key))]
    if isinstance(doc, list):
        return [place for i, value in enumerate(doc) for place in text_places(value, (*at, i))]
    return []


PLACES = [p for p in text_places(SNAPSHOT["facts"]) if p] + [("env", "variables", "PLANTED")]


def planted(place: tuple[Any, ...], value: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(json.dumps(SNAPSHOT))
    holder = doc["facts"]
    for step in place[:-1]:
        holder = holder.setdefault(step, {}) if isinstance(holder, dict) else holder[step]
    holder[place[-1]] = value
    return doc


def rendered_everywhere(doc: dict[str, Any], tmp: Path) -> dict[str, str]:
    """Every format of ``facts --redact`` and ``doctor --facts FILE --redact`` for ``doc``."""
    from neuron_env.doctor.facts_report import markdown_report
    from neuron_env.doctor.output import DOCTOR, FACTS, FactsReport
    from neuron_env.doctor.request import DoctorRequest
    from neuron_env.doctor.workflow import run_doctor
    from neuron_env.facts import facts_from_document
    from neuron_env.output.formats import FactsFormat, ReportFormat
    from neuron_env.redact import redact_facts, redact_report

    try:
        facts = facts_from_document(doc, "planted")
    except MalformedFile:
        assume(False)  # a field that holds no free text (a number, a choice): nothing to show
    snapshot = tmp / "snapshot.json"
    snapshot.write_text(json.dumps(doc))
    report = redact_report(run_doctor(DoctorRequest(facts_file=snapshot)))
    shown = FactsReport(redact_facts(facts), markdown_report((), facts, redact=True))
    outputs = {f"facts-{f.value}": FACTS.to_format(f).render(shown) for f in FactsFormat}
    for choice in ReportFormat:
        outputs[f"doctor-{choice.value}"] = DOCTOR.to_format(choice).render(report, verbose=True)
    return outputs | fleet_rendered(doc, tmp)


def fleet_rendered(doc: dict[str, Any], tmp: Path) -> dict[str, str]:
    """``fleet report DIR --redact`` in every format, DIR holding this host's snapshot under the
    name ``fleet collect`` gives it (its instance id) and an unreadable one."""
    from neuron_env.fleet.output import FLEET
    from neuron_env.fleet.redaction import redact_fleet
    from neuron_env.fleet.workflow import ReportRequest, report_fleet
    from neuron_env.output.formats import FleetFormat

    folder = tmp / "snapshots"
    folder.mkdir(exist_ok=True)
    (folder / "i-0abcdef1234567890.json").write_text(json.dumps(doc))
    (folder / "i-0fedcba9876543210.json").write_text("{")
    report = redact_fleet(report_fleet(ReportRequest(folder=folder)))
    return {
        f"fleet-{f.value}": FLEET.to_format(f).render(report, verbose=True) for f in FleetFormat
    }


def assert_parses(name: str, text: str) -> None:
    if name.endswith("json"):
        json.loads(text)
    elif name.endswith("junit"):
        ET.fromstring(text)
    elif name.endswith("html"):
        HTMLParser().feed(text)
        assert text.rstrip().endswith("</html>")


@pytest.fixture
def running_user(monkeypatch: pytest.MonkeyPatch) -> None:
    """The user running neuron-env is carol, at home in /data/users/carol (not under /home)."""
    monkeypatch.setenv("HOME", "/data/users/carol")
    for name in ("LOGNAME", "USER", "LNAME", "USERNAME"):
        monkeypatch.setenv(name, "carol")


@pytest.mark.usefixtures("running_user")
@pytest.mark.parametrize("kind", list(KINDS))
@settings(
    max_examples=8,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
        HealthCheck.too_slow,
    ],
)
@given(place=st.sampled_from(PLACES), around=AROUND)
def test_nothing_planted_survives_redaction_in_any_format(
    tmp_path: Path, kind: str, place: tuple[Any, ...], around: tuple[str, str]
) -> None:
    value, secrets = KINDS[kind]
    outputs = rendered_everywhere(planted(place, around[0] + value + around[1]), tmp_path)
    for name, text in outputs.items():
        assert_parses(name, text)
        unwrapped = "".join(text.split())  # a wrapped line must not hide a leak either
        for secret in secrets:
            assert secret not in text and secret not in unwrapped, (name, place, kind)


def test_versions_and_what_judges_the_host_are_kept(tmp_path: Path) -> None:
    outputs = rendered_everywhere(planted(("hostname",), "node-7"), tmp_path)
    for kept in ("2.13", "trn2.48xlarge", "ubuntu", "6.17.0-1004-aws"):
        assert kept in outputs["facts-json"], kept
    fleet = json.loads(outputs["fleet-json"])
    assert "i-0abcdef1234567890" not in outputs["fleet-json"]
    assert "host-1" in outputs["fleet-json"] and "host-2" in outputs["fleet-json"]
    assert fleet["counts"]


def test_fleet_report_redact_from_the_command_line(cli: CliRunner, tmp_path: Path) -> None:
    folder = tmp_path / "snapshots"
    folder.mkdir()
    doc = planted(("python", "executable"), "/home/alice/venvs/neuron/bin/python")
    (folder / "i-0abcdef1234567890.json").write_text(json.dumps(doc))
    page = cli("fleet", "report", str(folder), "--redact", "--format", "html")
    plain = cli("fleet", "report", str(folder), "--format", "html")
    assert page.returncode == plain.returncode, page.stderr
    assert "i-0abcdef1234567890" in plain.stdout and "i-0abcdef1234567890" not in page.stdout
    assert "host-1" in page.stdout
