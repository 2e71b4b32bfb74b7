"""``scripts/bootstrap.sh``, run for real against a temporary root with stand-ins on PATH.

The stand-ins (tests/data/bootstrap/) record every call; ``neuron-env doctor`` is the real one,
judging a scenario host, and ``curl`` is real: it fetches the EFA installer from a local HTTP
server and tags through a token-enforcing IMDSv2 server.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import http.server
import json
import shutil
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support.cli import DATA, NEURON_ENV, REPO
from tests.support.hosts import scenario_host

pytestmark = pytest.mark.integration

BOOTSTRAP = REPO / "scripts" / "bootstrap.sh"
STUBS = DATA / "bootstrap" / "stubs"
SPEC = "neuron-env==0.1.0"
SOURCE = ["--neuron-env-source", "pypi", "--neuron-env-spec", SPEC]
ARGS = ["--release", "2.33.1", "--torch", "2.14", *SOURCE]
WHEEL = "neuron_env-0.1.0-py3-none-any.whl"
WHEEL_BYTES = b"the neuron-env wheel the user built"
WHEELHOUSE = "neuron-env-wheelhouse.tar.gz"
TOOL = "/opt/neuron-env/tool/bin/neuron-env"
TAG = "Key=neuron-env:status,Value={}"

# The release the launch templates install here, 2.33.1, carries the known issues Neuron 2.34.0
# fixes (python.known-issues): a healthy boot is ready, with that warning.
READY = "warn"


@dataclass
class Machine:
    """A temporary root, the scenario host doctor judges, and the recorded calls."""

    root: Path
    env: dict[str, str]
    log: Path
    efa_url: str
    seen: int = field(default=0)

    def run(self, *extra: str, **env: str) -> subprocess.CompletedProcess[str]:
        return self.run_with(ARGS, *extra, **env)

    def run_with(
        self, args: list[str], *extra: str, **env: str
    ) -> subprocess.CompletedProcess[str]:
        args = [*args, "--efa-installer-url", self.efa_url, *extra]
        return subprocess.run(
            ["bash", str(BOOTSTRAP), *args], env={**self.env, **env},
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip

    def run_from(
        self, source: str, sha256: str | None, **env: str
    ) -> subprocess.CompletedProcess[str]:
        """A boot whose neuron-env comes from ``source`` (checked against ``sha256``)."""
        digest = [] if sha256 is None else ["--neuron-env-sha256", sha256]
        args = ["--release", "2.33.1", "--torch", "2.14", "--neuron-env-source", source, *digest]
        return self.run_with(args, **env)

    @property
    def server(self) -> str:
        """The local HTTP server's base URL (it serves the EFA installer and neuron-env)."""
        return self.efa_url.rsplit("/", 1)[0]

    def new_calls(self) -> list[str]:
        """The calls recorded since the last time this was asked."""
        lines = self.log.read_text().splitlines() if self.log.exists() else []
        fresh, self.seen = lines[self.seen :], len(lines)
        return fresh

    def path(self, absolute: str) -> Path:
        return self.root / absolute.lstrip("/")

    def status(self) -> str:
        return self.path("/var/lib/neuron-env/status").read_text().strip()

    def bootstrap_log(self) -> str:
        return self.path("/var/log/neuron-env/bootstrap.log").read_text()


@pytest.fixture(scope="module")
def efa_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The EFA installer tarball, its signature and key, over HTTP on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("efa")
    with tarfile.open(folder / "aws-efa-installer-latest.tar.gz", "w:gz") as tar:
        tar.add(DATA / "bootstrap" / "efa" / "aws-efa-installer", arcname="aws-efa-installer")
    (folder / "aws-efa-installer-latest.tar.gz.sig").write_bytes(b"signature")
    (folder / "aws-efa-installer.key").write_text("key")
    (folder / WHEEL).write_bytes(WHEEL_BYTES)
    (folder / "tampered").mkdir()
    (folder / "tampered" / WHEEL).write_bytes(WHEEL_BYTES + b" and a backdoor")
    with tarfile.open(folder / WHEELHOUSE, "w:gz") as tar:
        tar.add(folder / WHEEL, arcname=WHEEL)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/aws-efa-installer-latest.tar.gz"
    server.shutdown()
    server.server_close()  # its listening socket (left open, a ResourceWarning, an error here)


def machine_for(scenario_name: str, tmp_path: Path, efa_url: str) -> Iterator[Machine]:
    root, log = tmp_path / "root", tmp_path / "calls.log"
    root.mkdir()
    s3 = tmp_path / "s3"
    (s3 / "my-bucket" / "tools").mkdir(parents=True)
    (s3 / "my-bucket" / "tools" / WHEEL).write_bytes(WHEEL_BYTES)
    (tmp_path / "index").mkdir()
    (tmp_path / "index" / WHEEL).write_bytes(WHEEL_BYTES)
    for host in scenario_host(scenario_name, tmp_path / "host"):
        env = {
            "PATH": f"{STUBS}:/usr/bin:/bin",
            "NEURON_ENV_ROOT": str(root),
            "STUB_LOG": str(log),
            "STUBS": str(STUBS),
            "STUB_S3_DIR": str(s3),
            "STUB_PIP_WHEEL": str(tmp_path / "index" / WHEEL),
            "REAL_NEURON_ENV": str(NEURON_ENV),
            "HOST_SYSROOT": str(host.sysroot),
            "HOST_PYTHON": str(host.python),
            **host.env,  # its IMDS and matrix
        }
        yield Machine(root, env, log, efa_url)


@pytest.fixture
def healthy(tmp_path: Path, efa_server: str) -> Iterator[Machine]:
    yield from machine_for("healthy-trn2-ubuntu-26.04", tmp_path, efa_server)


@pytest.fixture
def broken(tmp_path: Path, efa_server: str) -> Iterator[Machine]:
    yield from machine_for("driver-not-loaded", tmp_path, efa_server)


def tool(machine: Machine) -> str:
    return str(machine.path("/opt/neuron-env/tool/bin/neuron-env"))


def test_first_boot_installs_what_is_missing_then_validates_and_publishes(
    healthy: Machine,
) -> None:
    result = healthy.run()
    assert result.returncode == 0, result.stderr
    venv = healthy.path("/opt/neuron-env/venv")
    calls = healthy.new_calls()
    assert calls == [
        "apt-get update",
        "apt-get install -y --no-install-recommends python3-venv ca-certificates curl gnupg",
        f"python3 -m venv {healthy.path('/opt/neuron-env/tool')}",
        f"pip install --upgrade {SPEC}",
        "neuron-env install --system --torch 2.14 --release 2.33.1 --execute",
        *[c for c in calls if c.startswith("gpg ")],
        "efa_installer.sh --yes",
        f"neuron-env install --torch 2.14 --release 2.33.1 --venv {venv} --yes --quiet",
        f"neuron-env doctor --release 2.33.1 --torch 2.14 --level 1 --python {venv}/bin/python"
        f" --format json --output {healthy.path('/var/log/neuron-env/doctor.json')}.tmp",
        "aws --region us-east-2 ec2 create-tags --resources i-0123456789abcdef0 --tags "
        + TAG.format(READY),
    ]
    assert [c.split()[1] for c in calls if c.startswith("gpg ")] == ["--batch", "--batch"]
    assert healthy.status() == READY
    assert healthy.path("/var/lib/neuron-env/ready").exists()
    assert healthy.path("/usr/local/bin/neuron-env").resolve() == Path(tool(healthy))


def test_the_report_is_the_doctor_s_json_and_a_dated_copy_is_kept(healthy: Machine) -> None:
    assert healthy.run().returncode == 0
    report = json.loads(healthy.path("/var/log/neuron-env/doctor.json").read_text())
    assert (report["schema"], report["status"], report["release"]) == (
        "neuron-env/doctor/v1", READY, "2.33.1",
    )  # fmt: skip
    (dated,) = healthy.path("/var/log/neuron-env").glob("doctor-*.json")
    assert json.loads(dated.read_text()) == report


def test_the_log_records_each_stage_and_command(healthy: Machine) -> None:
    assert healthy.run().returncode == 0
    log = healthy.bootstrap_log()
    for stage in ("prerequisites", "tool", "system", "efa", "python-env"):
        assert f"neuron-env-bootstrap: {stage}: starting" in log
        assert f"neuron-env-bootstrap: {stage}: done" in log
    assert "neuron-env-bootstrap: + apt-get update" in log
    report = "report /var/log/neuron-env/doctor.json"
    assert f"validate: {READY} (neuron-env doctor exit 0; {report})" in log
    assert f"tag: neuron-env:status={READY} on i-0123456789abcdef0" in log


def test_a_second_run_repeats_no_work_and_validates_again(healthy: Machine) -> None:
    assert healthy.run().returncode == 0
    healthy.new_calls()
    second = healthy.run()
    assert second.returncode == 0, second.stderr
    assert [c.split()[:2] for c in healthy.new_calls()] == [
        ["neuron-env", "doctor"],
        ["aws", "--region"],
    ]
    log = healthy.bootstrap_log()
    assert "prerequisites: already done" in log and "tool: already done" in log
    assert "system: already done" in log
    assert "efa: skipped, already on this image (/opt/amazon/efa)" in log
    assert "python-env: skipped, already on this image (/opt/neuron-env/venv/bin/python)" in log


def test_a_new_neuron_env_spec_reinstalls_the_tool_only(healthy: Machine) -> None:
    assert healthy.run().returncode == 0
    healthy.new_calls()
    args = [a if a != SPEC else "neuron-env==0.2.0" for a in ARGS]
    result = subprocess.run(
        ["bash", str(BOOTSTRAP), *args, "--efa-installer-url", healthy.efa_url],
        env=healthy.env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    installs = [c for c in healthy.new_calls() if not c.startswith(("neuron-env doctor", "aws "))]
    assert installs == [
        f"python3 -m venv {healthy.path('/opt/neuron-env/tool')}",
        "pip install --upgrade neuron-env==0.2.0",
    ]


def test_an_image_that_has_everything_gets_only_neuron_env_and_validation(healthy: Machine) -> None:
    venv = "/opt/aws_neuronx_venv_torch_neuronx_2_14_0"
    for present in ("/opt/aws/neuron/bin/neuron-ls", f"{venv}/bin/python"):
        healthy.path(present).parent.mkdir(parents=True)
        healthy.path(present).touch()
    healthy.path("/opt/amazon/efa").mkdir(parents=True)
    assert healthy.run("--venv", venv).returncode == 0
    tools = [c.split()[0] for c in healthy.new_calls()]
    assert tools == ["apt-get", "apt-get", "python3", "pip", "neuron-env", "aws"]
    assert "system: skipped, already on this image (/opt/aws/neuron/bin/neuron-ls)" in (
        healthy.bootstrap_log()
    )


def test_an_unhealthy_host_fails_and_says_so_everywhere(broken: Machine) -> None:
    result = broken.run()
    assert result.returncode == 1
    assert broken.status() == "fail"
    assert not broken.path("/var/lib/neuron-env/ready").exists()
    assert broken.new_calls()[-1].endswith(TAG.format("fail"))
    report = json.loads(broken.path("/var/log/neuron-env/doctor.json").read_text())
    assert report["status"] == "fail"


def test_a_failing_stage_is_an_error_with_the_log_tail_on_stderr(healthy: Machine) -> None:
    result = healthy.run(STUB_APT_FAIL="1")
    assert result.returncode == 100
    assert healthy.status() == "error"
    assert "E: Unable to locate package python3-venv" in result.stderr
    assert "failed (exit 100) before validation; see /var/log/neuron-env/bootstrap.log" in (
        result.stderr
    )
    calls = healthy.new_calls()
    assert not [c for c in calls if c.startswith("neuron-env")]
    assert calls[-1].endswith(TAG.format("error"))


def test_an_efa_installer_with_a_bad_signature_is_never_run(healthy: Machine) -> None:
    result = healthy.run(STUB_GPG_BAD="1")
    assert result.returncode != 0
    assert not [c for c in healthy.new_calls() if c.startswith("efa_installer.sh")]
    assert "efa: the installer's signature does not verify; not running it" in result.stderr
    assert healthy.status() == "error"


def test_a_denied_tag_is_logged_and_does_not_fail_the_boot(healthy: Machine) -> None:
    result = healthy.run(STUB_AWS_FAIL="1")
    assert result.returncode == 0
    assert healthy.status() == READY
    assert "tag: not permitted or failed; the instance profile needs ec2:CreateTags" in (
        healthy.bootstrap_log()
    )


def test_without_the_aws_cli_the_marker_file_still_holds_the_result(
    healthy: Machine, tmp_path: Path
) -> None:
    stubs = tmp_path / "stubs-without-aws"
    shutil.copytree(STUBS, stubs)
    (stubs / "aws").unlink()
    result = healthy.run(PATH=f"{stubs}:/usr/bin:/bin", STUBS=str(stubs))
    assert result.returncode == 0
    assert healthy.status() == READY
    assert "tag: the aws CLI is not installed; neuron-env:status not published" in (
        healthy.bootstrap_log()
    )


def test_an_image_build_leaves_no_verdict_in_the_image(healthy: Machine) -> None:
    assert healthy.run("--image-build").returncode == 0
    assert not [c for c in healthy.new_calls() if c.startswith("aws ")]
    assert not healthy.path("/var/lib/neuron-env/status").exists()
    assert not healthy.path("/var/lib/neuron-env/ready").exists()
    assert not healthy.path("/var/log/neuron-env/doctor.json").exists()
    kept = json.loads(healthy.path("/var/log/neuron-env/image-build-doctor.json").read_text())
    assert kept["status"] == READY
    assert healthy.path("/var/lib/neuron-env/stages/tool.done").read_text() == f"pypi {SPEC}\n"


def test_a_concurrent_bootstrap_is_refused(healthy: Machine) -> None:
    lock = healthy.path("/var/lib/neuron-env/bootstrap.lock")
    lock.parent.mkdir(parents=True)
    with lock.open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        result = healthy.run()
    assert result.returncode == 2
    assert "another neuron-env-bootstrap is running" in result.stderr
    assert healthy.new_calls() == []


# --- where neuron-env itself comes from ----------------------------------------------------------

SHA256 = hashlib.sha256(WHEEL_BYTES).hexdigest()


def tool_installs(machine: Machine) -> list[str]:
    """The calls that put neuron-env on the host (between the apt prerequisites and Neuron)."""
    calls = machine.new_calls()
    return [c for c in calls if c.startswith(("python3 ", "pip ", "aws s3"))]


def test_a_wheel_url_is_checked_against_its_sha256_before_it_is_installed(
    healthy: Machine,
) -> None:
    result = healthy.run_from(f"{healthy.server}/{WHEEL}", SHA256)
    assert result.returncode == 0, result.stderr
    download = healthy.path("/var/lib/neuron-env/tool-download")
    assert tool_installs(healthy) == [
        f"python3 -m venv {healthy.path('/opt/neuron-env/tool')}",
        f"pip install --upgrade {download}/{WHEEL}",
    ]
    assert f"tool: {WHEEL} matches sha256 {SHA256}" in healthy.bootstrap_log()
    assert not download.exists()
    assert healthy.status() == READY


def test_a_tampered_wheel_is_refused_and_nothing_is_installed(healthy: Machine) -> None:
    result = healthy.run_from(f"{healthy.server}/tampered/{WHEEL}", SHA256)
    assert result.returncode == 1
    assert f"not the expected {SHA256}; not installing it" in result.stderr
    calls = healthy.new_calls()
    assert not [c for c in calls if c.startswith(("pip ", "neuron-env "))]
    assert healthy.status() == "error"
    assert not healthy.path(TOOL).exists()
    assert not list(healthy.path("/var/lib/neuron-env/tool-download").iterdir())


def test_a_wheelhouse_installs_neuron_env_and_its_dependencies_without_an_index(
    healthy: Machine,
) -> None:
    digest = hashlib.sha256(urlopen_bytes(f"{healthy.server}/{WHEELHOUSE}")).hexdigest()
    result = healthy.run_from(f"{healthy.server}/{WHEELHOUSE}", digest)
    assert result.returncode == 0, result.stderr
    wheels = healthy.path("/var/lib/neuron-env/tool-download/wheels")
    assert tool_installs(healthy)[-1] == (
        f"pip install --upgrade --no-index --find-links {wheels} neuron-env"
    )


def urlopen_bytes(url: str) -> bytes:
    import urllib.request

    with urllib.request.urlopen(url, timeout=10) as response:  # a local server
        return bytes(response.read())


def test_an_s3_object_is_copied_with_the_aws_cli_and_checked(healthy: Machine) -> None:
    result = healthy.run_from(f"s3://my-bucket/tools/{WHEEL}", SHA256)
    assert result.returncode == 0, result.stderr
    download = healthy.path("/var/lib/neuron-env/tool-download")
    assert tool_installs(healthy) == [
        f"python3 -m venv {healthy.path('/opt/neuron-env/tool')}",
        f"aws s3 cp --only-show-errors s3://my-bucket/tools/{WHEEL} {download}/{WHEEL}",
        f"pip install --upgrade {download}/{WHEEL}",
    ]


def test_a_tampered_s3_object_is_refused(healthy: Machine) -> None:
    result = healthy.run_from(f"s3://my-bucket/tools/{WHEEL}", "0" * 64)
    assert result.returncode == 1
    assert "not installing it" in result.stderr
    assert not [c for c in healthy.new_calls() if c.startswith("pip ")]


def test_the_index_s_wheel_is_downloaded_alone_and_checked_when_a_sha256_is_given(
    healthy: Machine,
) -> None:
    args = ["--release", "2.33.1", "--torch", "2.14", *SOURCE, "--neuron-env-sha256", SHA256]
    assert healthy.run_with(args).returncode == 0
    download = healthy.path("/var/lib/neuron-env/tool-download")
    assert tool_installs(healthy)[1:] == [
        f"pip download --no-deps --only-binary=:all: --dest {download}/dist {SPEC}",
        f"pip install --upgrade {download}/dist/{WHEEL}",
    ]
    wrong = [*args[:-1], "f" * 64]
    result = healthy.run_with(wrong)
    assert result.returncode == 1
    assert "not installing it" in result.stderr


def test_the_image_s_own_copy_is_used_as_it_is(healthy: Machine) -> None:
    missing = healthy.run_from("ami", None)
    assert missing.returncode == 1
    assert f"tool: --neuron-env-source ami, but this image has no {TOOL}" in missing.stderr
    healthy.new_calls()
    healthy.path(TOOL).parent.mkdir(parents=True)
    shutil.copy(STUBS / "neuron-env", healthy.path(TOOL))
    result = healthy.run_from("ami", None)
    assert result.returncode == 0, result.stderr
    assert tool_installs(healthy) == []
    assert healthy.status() == READY


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--torch", "2.14"], "--release must be a version like 2.33.1"),
        (["--release", "2.33.1", "--torch", "2.14"], "--neuron-env-source is required"),
        (
            ["--release", "2.33.1", "--torch", "2.14", "--neuron-env-source", f"https://x/{WHEEL}"],
            f"--neuron-env-source https://x/{WHEEL} needs --neuron-env-sha256",
        ),
        (
            [
                "--release",
                "2.33.1",
                "--torch",
                "2.14",
                "--neuron-env-source",
                "https://x/a.sh",
                "--neuron-env-sha256",
                "0" * 64,
            ],
            "must name a wheel (.whl) or a wheelhouse (.tar.gz)",
        ),
        (
            [*ARGS, "--neuron-env-sha256", "$(id)"],
            "--neuron-env-sha256 must be 64 lowercase hex digits",
        ),
        (["--release", "2.33.1", "--torch", "latest"], "--torch must be a PyTorch minor"),
        ([*ARGS, "--system", "sometimes"], "stage modes are auto, always or never"),
        ([*ARGS, "--venv", "relative/venv"], "--venv must be an absolute path"),
        ([*ARGS, "--bogus"], "unknown argument: --bogus"),
    ],
)
def test_bad_usage_exits_2_and_changes_nothing(
    healthy: Machine, args: list[str], message: str
) -> None:
    result = subprocess.run(
        ["bash", str(BOOTSTRAP), *args], env=healthy.env, capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr
    assert not any(healthy.root.iterdir())
