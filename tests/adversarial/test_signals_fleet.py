"""A signal while ``fleet collect`` waits on SSM keeps every snapshot whole and leaves no partial.

The real console script talks to moto's server for EC2 and, for SSM (whose agents moto lacks), to
a small SSM endpoint on 127.0.0.1: every instance is online, the first answers with a real
gzipped, base64-encoded snapshot and the second's answer never comes. The test sees that request
arrive (the first snapshot is then written) and signals; or it holds the process from its side
while a snapshot is written beside its final name (``tests/support/pausing.py``). A handled
signal exits 128 + the signal with one ``Interrupted`` line; no ``.partial`` file is left, and
what is on disk is whole.
"""

from __future__ import annotations

import base64
import contextlib
import gzip
import json
import signal
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.aws import MotoServer, launch_image, reset
from tests.support.cli import DATA, cli_argv, machine_env
from tests.support.pausing import paused_env, wait_until_paused

pytestmark = pytest.mark.integration

SIGNALS = [signal.SIGINT, signal.SIGTERM]
SNAPSHOT = DATA / "snapshots" / "torch-2.13-container.json"


@dataclass
class SsmEndpoint:
    """SSM's JSON protocol, three calls: all online, the first instance answers, the rest hang."""

    answering: str = ""
    held: threading.Event = field(default_factory=threading.Event)
    release: threading.Event = field(default_factory=threading.Event)

    def answer(self, target: str, body: dict[str, Any]) -> dict[str, Any] | None:
        if target == "DescribeInstanceInformation":
            ids = body["Filters"][0]["Values"]
            return {"InstanceInformationList": [{"InstanceId": i, "PingStatus": "Online"}
                                                for i in ids]}  # fmt: skip
        if target == "SendCommand":
            return {"Command": {"CommandId": "0b4bf1f6-8c7e-4a43-9d3e-5a2f3c9e6d10"}}
        if body["InstanceId"] != self.answering:
            self.held.set()
            self.release.wait(120)  # never answers while the test runs
            return None
        packed = base64.b64encode(gzip.compress(SNAPSHOT.read_bytes())).decode()
        return {"Status": "Success", "ResponseCode": 0, "StandardOutputContent": packed}


def handler_for(endpoint: SsmEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            target = self.headers.get("X-Amz-Target", "").rpartition(".")[2]
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            reply = endpoint.answer(target, body)
            if reply is None:
                return
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-amz-json-1.1")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@dataclass(frozen=True)
class Fleet:
    env: dict[str, str]
    instances: list[str]
    ssm: SsmEndpoint


@pytest.fixture
def fleet(moto_session: MotoServer) -> Iterator[Fleet]:
    endpoint = SsmEndpoint()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(endpoint))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        # the session's server, reset: only this test's two instances carry the tag
        instances = launch(reset(moto_session), 2)
        endpoint.answering = instances[0]
        ssm_url = f"http://127.0.0.1:{server.server_address[1]}"
        env = {**machine_env("AWS_"), **moto_session.env(), "AWS_ENDPOINT_URL_SSM": ssm_url}
        yield Fleet(env, instances, endpoint)
    finally:
        endpoint.release.set()
        server.shutdown()
        server.server_close()


def launch(moto: MotoServer, count: int) -> list[str]:
    ec2 = moto.client("ec2")
    image = launch_image(ec2)
    tags = [{"ResourceType": "instance", "Tags": [{"Key": "Cluster", "Value": "train-a"}]}]
    response = ec2.run_instances(ImageId=image, MinCount=count, MaxCount=count,
                                 InstanceType="trn2.48xlarge", TagSpecifications=tags)  # fmt: skip
    return sorted(i["InstanceId"] for i in response["Instances"])


COLLECT = ["fleet", "collect", "--targets", "tag:Cluster=train-a", "--timeout", "60"]


def start(fleet: Fleet, out: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(cli_argv(*COLLECT, "-o", str(out)), env=env or fleet.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip


def ended_by(proc: subprocess.Popen[str], sig: int, go: Path | None = None) -> str:
    """Signal ``proc`` (held at a phase: then let it go on) and wait for its end."""
    proc.send_signal(sig)
    if go is not None:
        go.touch()
    try:
        _, err = proc.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
    return err


def assert_interrupted(proc: subprocess.Popen[str], err: str, sig: int) -> None:
    assert proc.returncode == 128 + sig, err
    assert len([line for line in err.splitlines() if "Interrupted" in line]) == 1, err
    assert "Traceback" not in err


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_a_signal_while_collect_waits_on_ssm_keeps_what_arrived_whole(
    fleet: Fleet, tmp_path: Path, sig: signal.Signals
) -> None:
    out = tmp_path / "snapshots"
    proc = start(fleet, out)
    if not fleet.ssm.held.wait(120):
        proc.kill()
        pytest.fail(f"collect never asked for the second answer: {proc.communicate()}")
    err = ended_by(proc, sig)
    assert_interrupted(proc, err, sig)
    first = fleet.instances[0]
    assert sorted(p.name for p in out.iterdir()) == [f"{first}.json"]
    assert json.loads((out / f"{first}.json").read_text()) == json.loads(SNAPSHOT.read_text())


@pytest.mark.parametrize("sig", [*SIGNALS, signal.SIGKILL], ids=lambda s: s.name)
def test_a_signal_while_a_snapshot_is_written_leaves_no_partial_file(
    fleet: Fleet, tmp_path: Path, sig: signal.Signals
) -> None:
    out, marks = tmp_path / "snapshots", tmp_path / "marks"
    proc = start(fleet, out, paused_env(fleet.env, "snapshot-rename", marks))
    go = wait_until_paused(proc, "snapshot-rename", marks)
    err = ended_by(proc, sig, go)
    left = sorted(p.name for p in out.iterdir())
    if sig == signal.SIGKILL:  # no handler runs: the partial stays, hidden, and no snapshot
        assert proc.returncode == -signal.SIGKILL
        assert [name for name in left if not name.endswith(".partial")] == []
        return
    assert_interrupted(proc, err, sig)
    assert left == []
