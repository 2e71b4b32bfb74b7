"""``neuron-env matrix verify`` against real HTTP indexes on 127.0.0.1.

The indexes are static simple trees (``simple/<project>/index.html`` and ``index.json``) written
from ``tests/data/verify/*.toml``: a page needs only the wheels' file names and hashes, so no wheel
is built. ``index_server.py`` serves them, answering PEP 691 JSON when started with ``--pep691``
and asked for it, PEP 503 HTML otherwise. Down, failing (HTTP 500) and hanging indexes are a
closed port, ``--status 500`` and a socket that listens but never answers.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import tomllib

from neuron_env.matrix.model import INSTANCE_FACTS
from neuron_env.resources import shipped_matrix_dir
from tests.support.cli import CliRunner, Result, cli_runner
from tests.support.page_indexes import SCENARIOS, Server, serve, write_tree

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Server]]:
    """Each scenario's indexes (``/neuron/simple``, ``/pytorch/simple``), in HTML and in JSON."""
    base = tmp_path_factory.mktemp("verify-indexes")
    running: dict[str, Server] = {}
    for scenario in ("agree", "contradict"):
        doc = tomllib.loads((SCENARIOS / f"{scenario}.toml").read_text())
        for index in ("neuron", "pytorch"):
            write_tree(base / scenario / index, doc[index])
        running[f"{scenario}-html"] = serve(base / scenario)
        running[f"{scenario}-json"] = serve(base / scenario, "--pep691")
    running["private"] = serve(base / "agree", "--pep691", "--auth", "alice:s3cr3t-t0ken")
    doc = tomllib.loads((SCENARIOS / "default.toml").read_text())
    write_tree(base / "default", doc["default"])
    running["default"] = serve(base / "default")
    running["failing"] = serve(base / "failing", "--status", "500")
    yield running
    for server in running.values():
        server.process.kill()
        server.process.wait()


@pytest.fixture
def cli(tmp_path: Path) -> CliRunner:
    """The console script, with no pip configuration: no default index unless a test sets one."""
    run = cli_runner(tmp_path)

    def isolated(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> Result:
        quiet = {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": ""}
        return run(*args, env={**quiet, **(env or {})}, timeout=timeout)

    return isolated


def index_args(servers: dict[str, Server], scenario: str, page_format: str = "json") -> list[str]:
    root = servers[f"{scenario}-{page_format}"].url
    return ["--neuron-index", f"{root}/neuron/simple", "--pytorch-index", f"{root}/pytorch/simple"]


def verify_json(cli: CliRunner, *args: str, env: dict[str, str] | None = None) -> dict[str, Any]:
    result = cli("matrix", "verify", "--release", "2.34.0", "--json", *args, env=env)
    doc: dict[str, Any] = json.loads(result.stdout)
    doc["_exit"] = result.returncode
    doc["_stderr"] = result.stderr
    return doc


def facts_by_id(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    facts = doc["facts"]
    assert isinstance(facts, list)
    return {fact["id"]: fact for fact in facts}


@pytest.mark.parametrize("page_format", ["html", "json"])
def test_an_index_that_agrees_confirms_the_shipped_file_and_exits_0(
    cli: CliRunner, servers: dict[str, Server], page_format: str
) -> None:
    doc = verify_json(cli, *index_args(servers, "agree", page_format))
    assert doc["_exit"] == 0, doc["_stderr"]
    facts = facts_by_id(doc)
    assert {f["status"] for f in facts.values()} <= {"confirmed", "unknown"}
    for fact_id in (
        "pairing.2.13.torch",
        "pairing.2.13.torch-neuronx",
        "pairing.2.13.newest-build",
        "pairing.2.13.python",
        "pairing.2.14.torch",
        "pairing.2.14.torch-neuronx",
        "pairing.2.14.newest-build",
        "pairing.2.14.python",
        "release.min-glibc",
        "os.ubuntu-22.04.wheels",
        "os.ubuntu-24.04.wheels",
        "os.ubuntu-26.04.wheels",
        "legacy-xla.last",
    ):
        assert facts[fact_id]["status"] == "confirmed", facts[fact_id]
    assert "2.14.3.1.2041" in str(facts["pairing.2.14.newest-build"]["index_shows"])
    assert "2.13.3.1.2040" in str(facts["pairing.2.13.newest-build"]["index_shows"])
    assert facts["legacy-xla.last"]["index_shows"] == "2.9.0.2.15.32035"
    # A range pin exists on the index, but the index cannot say which build is the release's.
    assert facts["package.neuronx-cc"]["status"] == "unknown"
    assert "2.29.1422.0" in str(facts["package.neuronx-cc"]["index_shows"])
    indexes = doc["indexes"]
    assert isinstance(indexes, list)
    assert {tuple(ix["formats"]) for ix in indexes} == {(page_format,)}


def test_an_index_that_contradicts_the_file_says_what_it_shows_instead_and_exits_1(
    cli: CliRunner, servers: dict[str, Server]
) -> None:
    doc = verify_json(cli, *index_args(servers, "contradict"))
    assert doc["_exit"] == 1
    assert doc["status"] == "contradicted"
    facts = facts_by_id(doc)
    newest = facts["pairing.2.14.newest-build"]
    assert newest["status"] == "contradicted"
    assert newest["file_says"] == "2.14.3.1" and newest["value"] == "2.14.3.2"
    assert "2.14.3.2.2100" in str(newest["index_shows"])
    python = facts["pairing.2.14.python"]
    assert python["status"] == "contradicted" and python["value"] == ["3.12", "3.13"]
    compiler = facts["package.neuronx-cc"]
    assert compiler["status"] == "contradicted" and compiler["value"] == "3.0.118.0"
    assert facts["os.ubuntu-24.04.wheels"]["status"] == "contradicted"  # glibc 2.35 wheels
    assert facts["pairing.2.14.torch"]["status"] == "confirmed"
    assert facts["legacy-xla.last"]["status"] == "confirmed"


def test_the_readable_report_marks_each_fact_and_counts_them(
    cli: CliRunner, servers: dict[str, Server]
) -> None:
    result = cli("matrix", "verify", "--release", "2.34.0", *index_args(servers, "contradict"))
    assert result.returncode == 1
    assert "Neuron 2.34.0 against its indexes" in result.stdout
    lines = result.stdout.splitlines()
    at = lines.index("✗ torch-neuronx 2.14.3.1 is the newest 2.14.3.* build")
    assert lines[at + 1] == "    neuron index: 2.14.3.2 (build 2.14.3.2.2100)"
    assert "✓ torch 2.14.0 is on the pytorch-cpu index" in lines
    assert any(re.fullmatch(r"\d+ confirmed, 5 contradicted, \d+ unknown\.", ln) for ln in lines)
    # One progress line per index on stderr, the report alone on stdout.
    progress = result.stderr.splitlines()
    assert len(progress) == 2 and all(line.startswith("read the ") for line in progress)


def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A port that accepts connections (the kernel's backlog) and never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        yield sock.getsockname()[1]


def test_an_index_that_is_down_is_named_with_the_reason_and_exits_1(
    cli: CliRunner, servers: dict[str, Server]
) -> None:
    down = f"http://127.0.0.1:{closed_port()}/simple"
    pytorch = index_args(servers, "agree")[2:]
    result = cli("matrix", "verify", "--release", "2.34.0", "--neuron-index", down, *pytorch)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr + result.stdout
    said = result.stdout + result.stderr
    assert f"{down}/torch-neuronx/" in said and "connection refused" in said
    assert "could not read the neuron index" in result.stderr


def test_an_index_answering_500_is_named_with_the_status_and_exits_1(
    cli: CliRunner, servers: dict[str, Server]
) -> None:
    failing = f"{servers['failing'].url}/simple"
    doc = verify_json(cli, "--neuron-index", failing, *index_args(servers, "agree")[2:])
    assert doc["_exit"] == 1 and doc["status"] == "unreadable"
    (neuron,) = [ix for ix in doc["indexes"] if ix["name"] == "neuron"]
    assert not neuron["readable"] and neuron["reason"].startswith("HTTP 500")
    facts = facts_by_id(doc)
    assert facts["pairing.2.14.newest-build"]["status"] == "unknown"
    assert facts["pairing.2.14.torch"]["status"] == "confirmed"  # the other index was read


def test_a_url_that_is_not_the_index_says_so(cli: CliRunner, servers: dict[str, Server]) -> None:
    root = servers["agree-json"].url  # the server, but not an index's simple root
    doc = verify_json(cli, "--neuron-index", root, *index_args(servers, "agree")[2:])
    assert doc["_exit"] == 1 and doc["status"] == "unreadable"
    assert "is this the index's simple URL?" in str(doc["_stderr"])


def test_an_index_that_never_answers_times_out_per_request(
    cli: CliRunner, servers: dict[str, Server], silent_port: int
) -> None:
    hanging = f"http://127.0.0.1:{silent_port}/simple"
    started = time.monotonic()
    result = cli(
        "matrix", "verify", "--release", "2.34.0", "--timeout", "0.5",
        "--neuron-index", hanging, *index_args(servers, "agree")[2:],
    )  # fmt: skip
    assert result.returncode == 1
    assert "no answer within 0.5 s" in result.stderr
    assert time.monotonic() - started < 20  # the first timeout ends that index's reading


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--release", "9.9.9"], "No matrix file describes Neuron release '9.9.9'"),
        (["--neuron-index", "ftp://mirror.example/simple"], "--neuron-index"),
        (["--pytorch-index", "not a url"], "--pytorch-index"),
        (["--timeout", "0"], "--timeout"),
    ],
)
def test_bad_input_exits_2_with_one_error_and_reads_nothing(
    cli: CliRunner, servers: dict[str, Server], args: list[str], says: str
) -> None:
    before = servers["agree-json"].requests()
    result = cli("matrix", "verify", *index_args(servers, "agree"), *args)
    assert result.returncode == 2
    assert says in " ".join(result.stderr.split()) and "Traceback" not in result.stderr
    assert servers["agree-json"].requests() == before


def test_a_write_dir_that_is_a_file_is_bad_input(cli: CliRunner, tmp_path: Path) -> None:
    not_a_dir = tmp_path / "overlay"
    not_a_dir.write_text("mine\n")
    down = f"http://127.0.0.1:{closed_port()}/simple"
    result = cli("matrix", "verify", "--neuron-index", down, "--write", str(not_a_dir))
    assert result.returncode == 2
    said = " ".join(result.stderr.split())
    assert "not a directory" in said and "could not read" not in said
    assert not_a_dir.read_text() == "mine\n"


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 that a client trusts only when told to (PIP_CERT)."""
    import datetime
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "neuron-env test index")])
    now = datetime.datetime.now(datetime.timezone.utc)
    public = key.public_key()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(public)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public), False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(public), False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = folder / "index.crt", folder / "index.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@pytest.fixture(scope="module")
def https_index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, Path]]:
    """The contradicting indexes over HTTPS, with a certificate only PIP_CERT makes trusted."""
    base = tmp_path_factory.mktemp("verify-https")
    cert, key = self_signed_certificate(base)
    doc = tomllib.loads((SCENARIOS / "contradict.toml").read_text())
    for index in ("neuron", "pytorch"):
        write_tree(base / "tree" / index, doc[index])
    server = serve(base / "tree", "--pep691", "--tls", str(cert), str(key), scheme="https")
    yield server, cert
    server.process.kill()
    server.process.wait()


def test_write_leaves_an_overlay_that_changes_what_resolve_answers(
    cli: CliRunner, https_index: tuple[Server, Path], tmp_path: Path
) -> None:
    from neuron_env.matrix import load_release_file
    from neuron_env.matrix.write import release_to_toml

    server, cert = https_index
    overlay_dir = tmp_path / "team-matrix"
    args = ["--neuron-index", f"{server.url}/neuron/simple"]
    args += ["--pytorch-index", f"{server.url}/pytorch/simple", "--write", str(overlay_dir)]
    untrusted = verify_json(cli, *args)
    assert untrusted["_exit"] == 1 and "TLS certificate not trusted" in str(untrusted["_stderr"])
    assert not overlay_dir.exists()  # nothing written from an incomplete reading

    doc = verify_json(cli, *args, env={"PIP_CERT": str(cert)})
    assert doc["_exit"] == 1 and doc["status"] == "contradicted"
    overlay = overlay_dir / "2.34.0.toml"
    assert doc["overlay"] == str(overlay)

    validated = cli("matrix", "validate", str(overlay))
    assert validated.returncode == 0, validated.stdout
    text = overlay.read_text()
    header = [line[2:] for line in text.splitlines() if line.startswith("# ")]
    assert release_to_toml(load_release_file(overlay), header) == text  # canonical form
    assert f'index-neuron = "{server.url}/neuron/simple"' in text  # cited, with the date
    assert "(index check " in text

    shipped = cli("matrix", "resolve", "--torch", "2.14", "--release", "2.34.0", "--json")
    assert '"==2.14.3.1.*"' in shipped.stdout
    resolved = cli(
        "--matrix-dir", str(overlay_dir), "matrix", "resolve", "--torch", "2.14",
        "--python-version", "3.12", "--os", "ubuntu-24.04", "--release", "2.34.0", "--json",
    )  # fmt: skip
    assert resolved.returncode == 0, resolved.stderr
    target = json.loads(resolved.stdout)["target"]
    pins = {pin["name"]: pin for pin in target["pins"]}
    assert pins["torch-neuronx"]["spec"] == "==2.14.3.2.*"
    assert pins["neuronx-cc"]["spec"] == "==3.0.118.0" and not pins["neuronx-cc"]["confirmed"]
    assert not [n for n in target["notes"] if n["code"] == "os.no-wheels"]

    no_cp314 = cli(
        "matrix", "resolve", "--torch", "2.14", "--python-version", "3.14", "--release", "2.34.0",
        env={"NEURON_ENV_MATRIX_DIR": str(overlay_dir)},
    )  # fmt: skip
    assert no_cp314.returncode == 2 and "3.12–3.13" in no_cp314.stderr
    shown = cli("--matrix-dir", str(overlay_dir), "matrix", "show", "--release", "2.34.0")
    assert "2.14.3.2" in shown.stdout


def test_credentials_from_the_url_or_netrc_are_sent_and_never_shown(
    cli: CliRunner, servers: dict[str, Server], tmp_path: Path
) -> None:
    private = servers["private"]
    host = private.url.removeprefix("http://")
    pytorch = ["--pytorch-index", f"{private.url}/pytorch/simple"]
    refused = verify_json(cli, "--neuron-index", f"{private.url}/neuron/simple", *pytorch)
    assert refused["_exit"] == 1 and "HTTP 401" in str(refused["_stderr"])

    in_url = f"http://alice:s3cr3t-t0ken@{host}/neuron/simple"
    result = cli("matrix", "verify", "--release", "2.34.0", "--neuron-index", in_url, "--json")
    assert "s3cr3t" not in result.stdout + result.stderr
    assert "alice:****@" in result.stderr
    neuron = next(ix for ix in json.loads(result.stdout)["indexes"] if ix["name"] == "neuron")
    assert neuron["readable"] and neuron["url"] == f"http://alice:****@{host}/neuron/simple"

    netrc = tmp_path / "netrc"
    netrc.write_text("machine 127.0.0.1 login alice password s3cr3t-t0ken\n")
    netrc.chmod(0o600)
    doc = verify_json(
        cli, "--neuron-index", f"{private.url}/neuron/simple", *pytorch, env={"NETRC": str(netrc)}
    )
    assert doc["_exit"] == 0, doc["_stderr"]
    assert "s3cr3t" not in json.dumps(doc)


def test_the_default_index_from_pip_config_checks_the_placeholders(
    cli: CliRunner, servers: dict[str, Server], tmp_path: Path
) -> None:
    config = tmp_path / "pip.conf"
    config.write_text(f"[global]\nindex-url = {servers['default'].url}/simple\n")
    doc = verify_json(cli, *index_args(servers, "agree"), env={"PIP_CONFIG_FILE": str(config)})
    default = next(ix for ix in doc["indexes"] if ix["name"] == "default")
    assert default["origin"] == str(config) and default["readable"]
    facts = facts_by_id(doc)
    assert facts["placeholder.torch-neuronx"]["status"] == "confirmed"
    assert facts["placeholder.neuronx-cc"]["status"] == "confirmed"
    missing = facts["placeholder.torchtitan-neuron"]
    assert missing["status"] == "contradicted" and "no torchtitan-neuron" in missing["index_shows"]
    impostor = facts["placeholder.nki"]
    assert impostor["status"] == "contradicted" and "99.0" in impostor["index_shows"]
    assert impostor["value"] == ["0.0.1"]  # never written into the file as a placeholder
    assert doc["_exit"] == 1

    without = cli("matrix", "verify", "--release", "2.34.0", *index_args(servers, "agree"))
    assert "Placeholders on the default index: not checked" in without.stdout


def test_ctrl_c_while_an_index_hangs_ends_at_once_and_writes_nothing(tmp_path: Path) -> None:
    import signal

    from tests.support.cli import cli_argv

    overlay = tmp_path / "overlay"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(16)
        sock.settimeout(60)
        hanging = f"http://127.0.0.1:{sock.getsockname()[1]}/simple"
        proc = subprocess.Popen(
            cli_argv("matrix", "verify", "--release", "2.34.0", "--timeout", "120",
                     "--neuron-index", hanging, "--pytorch-index", hanging,
                     "--write", str(overlay)),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        conn, _ = sock.accept()  # the request is out: neuron-env now waits for an answer
        with conn:
            started = time.monotonic()
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - started < 10  # not the 120 s the hung read would take
    assert "Interrupted. Nothing was written." in err and "Traceback" not in err
    assert not overlay.exists() or not any(overlay.iterdir())


def test_verify_write_offline_says_once_the_overlay_was_not_written(
    cli: CliRunner, tmp_path: Path
) -> None:
    overlay = tmp_path / "overlay"
    with socket.socket() as sock:  # bound, never listening: every connection is refused
        sock.bind(("127.0.0.1", 0))
        closed = f"http://127.0.0.1:{sock.getsockname()[1]}/simple"
        result = cli("matrix", "verify", "--release", "2.34.0", "--neuron-index", closed,
                     "--pytorch-index", closed, "--write", str(overlay))  # fmt: skip
    assert result.returncode == 1, result.stderr
    out = " ".join(result.stdout.split())
    assert out.count("connection refused") == 2, result.stdout  # once per index, not per fact
    assert "could not be read (15 facts unknown)" in out
    assert "could not be read (5 facts unknown)" in out
    assert out.count("Overlay not written") == 1
    assert f"Overlay not written to {overlay}" in out
    assert not overlay.exists() or not any(overlay.iterdir())


def test_an_instance_value_no_source_holds_is_reported(
    cli: CliRunner, servers: dict[str, Server], tmp_path: Path
) -> None:
    """The shipped file sources every instance value (nothing reported); a copy whose trn2u
    entry cites nothing per value gets each unsourced value named, by the matrix file."""
    shipped = verify_json(cli, *index_args(servers, "agree"))
    assert not [f for f in shipped["facts"] if f["id"].startswith("instance-types.")]
    text = (shipped_matrix_dir() / "2.34.0.toml").read_text()
    entry = text.index('[instance-types."trn2u.48xlarge"]')
    end = text.index("\n\n", entry)
    kept = [ln for ln in text[entry:end].splitlines() if not ln.startswith(("cites", "unconf"))]
    folder = tmp_path / "unsourced"
    folder.mkdir()
    (folder / "2.34.0.toml").write_text(text[:entry] + "\n".join(kept) + text[end:])
    args = ["--matrix-dir", str(folder), "matrix", "verify", "--release", "2.34.0"]
    doc = json.loads(cli(*args, "--json", *index_args(servers, "agree")).stdout)
    facts = facts_by_id(doc)
    vcpus = facts["instance-types.trn2u.48xlarge.vcpus"]
    assert vcpus["status"] == "unknown" and vcpus["file_says"] == "192"
    assert "no source cited for this value" in vcpus["index_shows"]
    reported = {f["id"] for f in doc["facts"] if f["id"].startswith("instance-types.")}
    assert reported == {f"instance-types.trn2u.48xlarge.{key}" for key in INSTANCE_FACTS}
    text_report = cli(*args, *index_args(servers, "agree")).stdout
    assert "? trn2u.48xlarge max-efa = 16 (unsourced)" in text_report
    assert "    matrix file: no source cited for this value" in text_report
