"""``neuron-env facts --format text`` (a Markdown bug report) and ``--redact`` (every format).

The host is a sysroot tree, IMDS a real server on 127.0.0.1 and the target a real venv under a
user's home folder; what must not leak is planted where real hosts hold it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import CliRunner
from tests.support.hosts import Host, build_sysroot, build_target, load_scenario, write_matrix
from tests.support.imds import imds_server, instance_metadata

HOST_NAME = "trn2-node-01"  # the healthy tree's /etc/hostname
INSTANCE_ID = "i-0123456789abcdef0"  # what tests/support/imds.py answers
ACCOUNT_ID = "123456789012"
ADDRESSES = ("10.1.2.3", "fe80::1ff:fe23:4567:890a")
MAC = "0a:1b:2c:3d:4e:5f"
USER = "alice"
SECTIONS = (
    "## neuron-env facts",
    "### Release judged",
    "### Host",
    "### Driver, devices and system packages",
    "### Python environment",
    "### Environment variables",
)


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    scenario = load_scenario("healthy-trn2-ubuntu-26.04")
    home = tmp_path / "home" / USER
    home.mkdir(parents=True)
    sysroot, python = build_sysroot(scenario, tmp_path), build_target(scenario, home)
    matrix = write_matrix(scenario.matrix, tmp_path)
    with imds_server(instance_metadata("trn2.48xlarge")) as imds:
        env = {
            "AWS_EC2_METADATA_SERVICE_ENDPOINT": imds.endpoint,
            "NEURON_RT_ROOT_COMM_ID": f"{ADDRESSES[0]}:62182",
            "NEURON_COMPILE_CACHE_URL": f"s3://cache-{ACCOUNT_ID}/neff",
            "NEURON_RT_NOTE": f"eth0 {MAC} {ADDRESSES[1]}",
            "NEURON_ENV_MATRIX_DIR": str(matrix),
        }
        yield Host(sysroot, python, matrix, env)


def test_text_is_a_markdown_report_with_every_section(cli: CliRunner, host: Host) -> None:
    result = cli("facts", *host.probe(), "--format", "text", env=host.env)
    assert result.returncode == 0, result.stderr
    for section in SECTIONS:
        assert f"\n{section}\n" in f"\n{result.stdout}", section
    assert "| Instance type | trn2.48xlarge |" in result.stdout
    assert "| `torch-neuronx` | 2.14.3.0.2187" in result.stdout
    assert "| Neuron release | 2.33.1 |" in result.stdout
    assert HOST_NAME in result.stdout  # not redacted unless asked


@pytest.mark.parametrize("output_format", ["text", "json"])
def test_redact_removes_what_identifies_the_host_and_keeps_versions(
    cli: CliRunner, host: Host, output_format: str
) -> None:
    result = cli("facts", *host.probe(), "--format", output_format, "--redact", env=host.env)
    assert result.returncode == 0, result.stderr
    for secret in (HOST_NAME, INSTANCE_ID, ACCOUNT_ID, *ADDRESSES, MAC, f"/{USER}/"):
        assert secret not in result.stdout, secret
    for kept in ("2.14.3.0.2187", "2.14.0+cpu", "2.31.8.0", "trn2.48xlarge", "us-east-2"):
        assert kept in result.stdout, kept
    assert "/home/<user>/" in result.stdout


def test_a_redacted_snapshot_is_still_judged_by_doctor(
    cli: CliRunner, host: Host, tmp_path: Path
) -> None:
    saved = tmp_path / "host.json"
    collected = cli("facts", *host.probe(), "--redact", "-o", str(saved), env=host.env)
    assert collected.returncode == 0, collected.stderr
    assert json.loads(saved.read_text())["facts"]["hostname"] == "<host>"
    judged = cli("doctor", "--facts", str(saved), env=host.env)
    assert "Judged against Neuron 2.33.1" in judged.stdout
    assert judged.returncode == 0, judged.stdout


def test_doctor_redact_hides_the_user_in_its_findings(cli: CliRunner, host: Host) -> None:
    result = cli("doctor", *host.probe(), "--redact", "--format", "json", env=host.env)
    assert f"/{USER}/" not in result.stdout
    assert HOST_NAME not in result.stdout
    assert json.loads(result.stdout)["facts"]["python"]["distributions"]["torch"]["version"] == (
        "2.14.0+cpu"
    )


def test_facts_refuses_an_unknown_format(cli: CliRunner) -> None:
    result = cli("facts", "--format", "markdown")
    assert result.returncode == 2
    assert "json" in result.stderr and "text" in result.stderr
