"""``--redact`` leaves nothing a user must not publish, wherever it stands (issue 38 §3).

A real facts snapshot (``tests/data/snapshots/torch-2.13-container.json``) gets one thing a user
must not paste into a public issue, planted by ``hypothesis`` into any of its text fields (a
path, an environment variable, a pip URL, the neuron-ls output, ...), alone or inside other text.
The snapshot is then shown as ``facts --redact`` shows it (JSON, and the Markdown bug report of
``--format text``), judged and shown as ``doctor --facts FILE --redact`` shows it (text, JSON,
JUnit, GitHub), and judged as one host of a fleet as ``fleet report DIR --redact`` shows it
(text, JSON, JUnit, GitHub, HTML): the planted value appears in none of them, not even split
across a wrapped line, and every document still parses. The same kinds are planted in the
reports of a user's own runs, as ``scan --redact`` (text, JSON, SARIF), ``evaluate --redact``
(text, JSON, HTML, the tracebacks) and ``collectives --redact`` (text, JSON, JUnit, HTML) show them.

The planted values copy their real shapes: AWS's documented example keys (``AKIAIOSFODNN7EXAMPLE``,
``wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY``), an S3 SigV4 presigned URL, EC2's private DNS names
(``ip-10-0-1-23.ec2.internal``), an IAM role ARN, a JWT bearer token.
"""

from __future__ import annotations

import json
import tempfile
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from neuron_env.errors import MalformedFile
from tests.support.cli import DATA, CliRunner

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


# Each example runs the real CLI (slow, and the fixtures are per test), always the same examples.
PROPERTY: dict[str, Any] = {
    "deadline": None,
    "derandomize": True,
    "suppress_health_check": [
        HealthCheck.function_scoped_fixture,
        HealthCheck.filter_too_much,
        HealthCheck.too_slow,
    ],
}


@pytest.mark.usefixtures("running_user")
@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=8, **PROPERTY)
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


# --- scan, evaluate and collectives: reports of the user's own run -------------------------------
# Each command redacts its result before any format is laid out (``redact_object`` with
# ``local_redactor``, as its ``--redact`` does); the value is planted in one of the places where
# the user's run puts text: the scanned folder, the model's names and errors, a rank's host, ...

SCAN_PLACES = ["root"]
EVALUATE_PLACES = [
    "entry", "python", "info.python", "info.name", "model.name", "model.class", "model.source",
    "model.warning", "input.name", "comparison.tensor", "eager.message", "fallback_op", "op_count",
    "eager.traceback", "compile.message", "graph_break", "compile.error", "failed_op",
    "failed_op.error", "advice", "traceback", "problem", "problem.fix",
]  # fmt: skip
COLLECTIVES_PLACES = [
    "host",
    "failure.message",
    "failure.host",
    "note",
    "nccom.message",
    "nccom.command",
]
LOCAL_PLACES = (
    [("scan", p) for p in SCAN_PLACES]
    + [("evaluate", p) for p in EVALUATE_PLACES]
    + [("collectives", p) for p in COLLECTIVES_PLACES]
)


def scan_rendered(value: str, tmp: Path) -> dict[str, str]:
    """``scan --redact`` in every format, of a folder whose path holds ``value`` (a presigned
    URL's parameters become folders of their own: no file name may pass 255 bytes)."""
    from neuron_env.output.formats import ScanFormat
    from neuron_env.redact_text import local_redactor, redact_object
    from neuron_env.scan.output import SCAN
    from neuron_env.scan.workflow import ScanRequest, ScanResult, run_scan

    parts = [p for p in value.replace("&", "/&").split("/") if p not in ("", ".", "..")]
    root = Path(tempfile.mkdtemp(dir=tmp)).joinpath(*parts)
    root.mkdir(parents=True)
    (root / "train.py").write_text("import torch_xla.core.xla_model as xm\ndev = xm.xla_device()\n")
    result = run_scan(ScanRequest(paths=(root,), root=root))
    assert isinstance(result, ScanResult) and result.report.findings
    shown = redact_object(result, local_redactor())
    return {f"scan-{f.value}": SCAN.to_format(f).render(shown) for f in ScanFormat}


def evaluation_with(place: str, text: str) -> Any:
    """An evaluation shaped as ``evaluate`` reports one (tests/unit/test_evaluate_html.py), with
    ``text`` at ``place``."""
    from neuron_env.evaluate import (
        Evaluation,
        FailedOp,
        GraphBreak,
        ModelInfo,
        StageResult,
        TensorInfo,
    )
    from neuron_env.worker.results import Comparison, DeviceInfo, Problem

    def at(name: str, default: str) -> str:
        return text if place == name else default

    info = DeviceInfo("neuron", "neuron", True, 2, "3.12.3", at("info.python", "/venv/bin/python"),
                      "2.14.0", name=at("info.name", "Trainium2"), compile_backend="neuron",
                      torch_neuronx="2.14.3.0")  # fmt: skip
    model = ModelInfo(at("model.name", "Net"), at("model.class", "pkg.Net"),
                      at("model.source", "train.py:3"), 1000, 1000, ("fp32",),
                      (TensorInfo(at("input.name", "x"), (2, 8), "fp32"),), False, True, False,
                      warnings=(at("model.warning", "dropout is active"),))  # fmt: skip
    compared = Comparison(at("comparison.tensor", "output"), False, 3, 10, 1e-3, 1e-3, 2e-4, 5e-4,
                          1.0, 0.2)  # fmt: skip
    eager = StageResult("eager", "fallback", at("eager.message", "fell back"), (compared,),
                        fallback_ops=(at("fallback_op", "aten::nonzero"),),
                        op_counts={"aten::mm": 3, at("op_count", "aten::add"): 1},
                        first_call_s=2.5, steady_s=0.004, repeats=5,
                        traceback=at("eager.traceback", ""))  # fmt: skip
    compiled = StageResult("compile", "error", at("compile.message", "compilation failed"),
                           graphs=2, graph_breaks=(GraphBreak(at("graph_break", "print()"), 1),),
                           error=at("compile.error", "neuronx-cc failed"),
                           failed_ops=(FailedOp(at("failed_op", "aten::sort"),
                                                at("failed_op.error", "unsupported")),),
                           first_call_s=30.0)  # fmt: skip
    problem = None
    if place.startswith("problem"):
        problem = Problem("model-raised", at("problem", "make() raised"), at("problem.fix", "Fix"))
    return Evaluation(at("entry", "train.py:make"), "neuron", at("python", "/venv/bin/python"),
                      info, model, (eager, compiled), problem, at("traceback", ""),
                      compile=True, advice=(at("advice", "Use bf16."),))  # fmt: skip


def evaluate_rendered(place: str, value: str) -> dict[str, str]:
    """``evaluate --redact`` in every format, and the tracebacks ``--debug`` prints."""
    import io

    from rich.console import Console

    from neuron_env.evaluate.output import EVALUATION, print_tracebacks
    from neuron_env.output.formats import EvaluationFormat
    from neuron_env.redact_text import local_redactor, redact_object

    shown = redact_object(evaluation_with(place, value), local_redactor())
    outputs = {
        f"evaluate-{f.value}": EVALUATION.to_format(f).render(shown, verbose=True)
        for f in EvaluationFormat
    }
    stream = io.StringIO()
    print_tracebacks(Console(file=stream, width=80), shown)
    return outputs | {"evaluate-tracebacks": stream.getvalue()}


def collectives_rendered(place: str, text: str) -> dict[str, str]:
    """``collectives --redact`` in every format, of a run shaped as
    tests/unit/test_collectives_figures.py builds one, with ``text`` at ``place``."""
    from neuron_env.collectives.models import CollectivesResult, Failure, NccomOp, NccomRow, Row
    from neuron_env.collectives.output import COLLECTIVES
    from neuron_env.output.formats import CollectivesFormat
    from neuron_env.redact_text import local_redactor, redact_object

    def at(name: str, default: str) -> str:
        return text if place == name else default

    rows = [Row("all_reduce", s, s // 4, "float32", "sum", 1e-3, 1e-3, 1e-3, s / 1e6, s / 1e6, 0)
            for s in (1024, 2048)]  # fmt: skip
    theirs = tuple(NccomRow(r.size, 1e-4, r.busbw / 2, r.busbw / 2, 2.0) for r in rows)
    host = at("host", "trn2-node-1")
    result = CollectivesResult(
        "gloo", 2, "float32", hosts=[host, "trn2-node-2"], rows=rows, complete=True,
        failures=[Failure("crash", at("failure.message", f"rank 1 on {host} exited 1"), 1,
                          host=at("failure.host", host))],
        notes=[at("note", "warm-up 5 iterations")],
        nccom=[NccomOp("all_reduce", "ran", at("nccom.command", "allr"), rows=theirs),
               NccomOp("broadcast", "failed", None, at("nccom.message", "nccom-test failed"))],
    )  # fmt: skip
    shown = redact_object(result, local_redactor(result.hosts))
    return {
        f"collectives-{f.value}": COLLECTIVES.to_format(f).render(shown) for f in CollectivesFormat
    }


@pytest.mark.usefixtures("running_user")
@pytest.mark.parametrize("kind", list(KINDS))
@settings(max_examples=10, **PROPERTY)
@given(where=st.sampled_from(LOCAL_PLACES), around=AROUND)
def test_nothing_planted_survives_in_scan_evaluate_and_collectives_reports(
    tmp_path: Path, kind: str, where: tuple[str, str], around: tuple[str, str]
) -> None:
    value, secrets = KINDS[kind]
    command, place = where
    planted_value = around[0] + value + around[1]
    if command == "scan":
        assume(kind != "secret-key")  # a key is no folder name: its slashes make it a path
        outputs = scan_rendered(planted_value, tmp_path)
    elif command == "evaluate":
        outputs = evaluate_rendered(place, planted_value)
    else:
        outputs = collectives_rendered(place, planted_value)
    for name, text in outputs.items():
        assert_parses(name, text)
        unwrapped = "".join(text.split())
        for secret in secrets:
            assert secret not in text and secret not in unwrapped, (name, place, kind)


def test_scan_evaluate_and_collectives_keep_what_judges_the_run() -> None:
    """Versions, sizes and figures stay: only what identifies a host or a person goes."""
    page = evaluate_rendered("entry", "train.py:make")
    for kept in ("2.14.3.0", "train.py:make", "aten::sort", "3.12.3"):
        assert kept in page["evaluate-json"], kept
    runs = collectives_rendered("note", "warm-up 5 iterations")
    document = json.loads(runs["collectives-json"])
    assert document["hosts"] == ["host-1", "host-2"]
    assert "trn2-node-1" not in "".join(runs.values())
    assert "2048" in runs["collectives-text"]


def test_scan_redact_from_the_command_line(cli: CliRunner, tmp_path: Path) -> None:
    """``scan --redact --format sarif``: the scanned folder's user name leaves the SARIF root."""
    root = tmp_path / "home" / "alice" / "project"
    root.mkdir(parents=True)
    (root / "train.py").write_text("import torch_xla.core.xla_model as xm\n")
    args = ("scan", str(root), "--root", str(root), "--format", "sarif")
    plain, redacted = cli(*args), cli(*args, "--redact")
    assert plain.returncode == redacted.returncode == 1, redacted.stderr
    assert "/home/alice/project" in plain.stdout
    assert "alice" not in redacted.stdout
    document = json.loads(redacted.stdout)
    base = document["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
    assert base.startswith("file:///") and base.endswith("/home/%3Cuser%3E/project/")
