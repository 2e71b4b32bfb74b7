"""``image render`` follows install's rules: no Neuron name reaches a Dockerfile's plain pip
install from the default index, and what ``install`` refuses the image refuses too.

Each attack is the real console script with the shipped matrix; a refusal is exit 2, nothing on
stdout (no Dockerfile to redirect into a file), a message that says which case it is, and no
traceback.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import CliRunner, cli_runner

pytestmark = pytest.mark.integration

SOURCE = ("--neuron-env-source", "pypi")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CliRunner:
    return cli_runner(tmp_path_factory.mktemp("names-image"))


def refused(run: CliRunner, *args: str) -> str:
    """``image render --torch 2.14 ARGS``, which must be refused as bad input; its message."""
    result = run("image", "render", "--torch", "2.14", *args)
    assert result.returncode == 2, result.stdout[-400:] + result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    return " ".join(result.stderr.split())


@pytest.mark.parametrize(
    ("package", "case"),
    [
        ("nkipy==0.1", "only its 'WRONG PACKAGE' placeholder 0.0.2 exists"),
        ("nki-library==0.0.2", "only its 'WRONG PACKAGE' placeholder 0.0.1, 0.0.2 exists"),
        ("nrtpy==1.0", "only its 'WRONG PACKAGE' placeholder 0.0.1 exists"),
        ("nki_foo==1", "it matches nki*"),
        ("neuronperf==1.2", "it matches *neuron*"),
    ],
)
@pytest.mark.parametrize("given", ["argument", "-r"])
def test_a_neuron_name_never_reaches_the_dockerfile_s_pip_install(
    run: CliRunner, tmp_path: Path, package: str, case: str, given: str
) -> None:
    if given == "-r":
        reqs = tmp_path / "requirements.txt"
        reqs.write_text(f"transformers==4.57.1\n{package}\n")
        message = refused(run, *SOURCE, "-r", str(reqs))
    else:
        message = refused(run, *SOURCE, package)
    name = package.split("==")[0].replace("_", "-")
    assert f"{name} is a Neuron package name" in message and case in message
    assert "pins it" not in message  # the release pins none of these


@pytest.mark.parametrize(
    ("package", "said"),
    [
        ("torch-xla==2.9", "part of the legacy PyTorch/XLA stack"),
        ("transformers-neuronx==0.13.0", "part of the legacy PyTorch/XLA stack"),
        ("torchao==0.18.0", "upstream torchao cannot share an environment with torchao-neuron"),
    ],
)
def test_what_install_refuses_the_image_refuses(run: CliRunner, package: str, said: str) -> None:
    message = refused(run, *SOURCE, package)
    assert said in message


def test_a_companion_is_not_said_to_be_pinned_and_gets_a_command_that_adds_it(
    run: CliRunner,
) -> None:
    message = refused(run, *SOURCE, "torchao-neuron")
    assert "is a Neuron companion" in message and "pins it" not in message
    assert "neuron-env install --torch 2.14.0 --release 2.34.0 --venv /opt/venv" in message


@pytest.mark.parametrize(
    ("base", "said"),
    [
        ("ubuntu:22.04", "publishes no torch-neuronx pip wheels for Ubuntu 22.04 LTS"),
        ("public.ecr.aws/ubuntu/ubuntu:24.04", "no torch-neuronx pip wheels for Ubuntu 24.04"),
        ("ubuntu:jammy-20250101", "is ubuntu-22.04"),
    ],
)
def test_a_base_of_an_os_without_wheels_is_refused_not_noted(
    run: CliRunner, base: str, said: str
) -> None:
    message = refused(run, *SOURCE, "--base", base)
    assert said in message and "ubuntu-26.04" in message


def test_a_base_whose_os_cannot_be_told_keeps_its_note(run: CliRunner) -> None:
    result = run("image", "render", "--torch", "2.14", *SOURCE, "--base", "mycorp/trainium:1")
    assert result.returncode == 0, result.stderr
    assert "FROM mycorp/trainium:1" in result.stdout
    assert "must be" in result.stderr


def test_a_refused_tool_source_offers_no_option_image_render_lacks(run: CliRunner) -> None:
    message = refused(run, "--neuron-env-source", "ami")
    assert "--ami" not in message
