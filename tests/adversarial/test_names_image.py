"""``image render`` follows install's rules: no Neuron name reaches a Dockerfile from any index
but the Neuron one, asked for by name or pulled in as a dependency, and what ``install`` refuses
the image refuses too.

Each attack is the real console script with the shipped matrix; a refusal is exit 2, nothing on
stdout (no Dockerfile to redirect into a file), a message that says which case it is, and no
traceback. The user's packages reach the image's ``neuron-env install`` and nothing else: that
command, taken from the Dockerfile and run for real against the local indexes, refuses a package
whose dependency is a Neuron name only the default index has.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from tests.support.cli import CliRunner, cli_runner
from tests.support.dockerfile import command, parse_dockerfile, run_commands
from tests.support.indexes import Indexes, start_indexes
from tests.support.install_helpers import (
    flat,
    install_env,
    python_here,
    run_cli,
    write_install_matrix,
)

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


# --- the user's packages reach 'neuron-env install' only -------------------------------------

PACKAGES = (
    "transformers==4.57.1",
    "datasets[audio]==4.4.1",
    "accelerate[testing]==1.11.0; python_version >= '3.12' and sys_platform == 'linux'",
)
# pip, pip3, pip3.12, uv, easy_install: anything that could install a package, by any path.
_INSTALLER = re.compile(r"(?:.*/)?(?:pip[0-9.]*|uv|easy_install)")


def installers(commands: list[list[str]]) -> list[list[str]]:
    """The RUN commands that run pip or uv (directly, via ``python -m pip`` or ``uv pip``)."""
    return [
        c
        for c in commands
        if _INSTALLER.fullmatch(c[0]) or any(c[i : i + 2] == ["-m", "pip"] for i in range(len(c)))
    ]


@pytest.mark.parametrize("given", ["argument", "-r"])
def test_user_packages_are_installed_by_neuron_env_install_alone_each_one_quoted_word(
    run: CliRunner, tmp_path: Path, given: str
) -> None:
    if given == "-r":
        reqs = tmp_path / "requirements.txt"
        reqs.write_text("\n".join(PACKAGES) + "\n")
        result = run("image", "render", "--torch", "2.14", *SOURCE, "-r", str(reqs))
    else:
        result = run("image", "render", "--torch", "2.14", *SOURCE, *PACKAGES)
    assert result.returncode == 0, result.stderr
    instructions = parse_dockerfile(result.stdout)
    commands = run_commands(instructions)
    wanted = [str(Requirement(p)) for p in PACKAGES]
    names = {Requirement(p).name for p in PACKAGES}
    for argv in installers(commands):  # neuron-env's own venv only, never the user's packages
        assert not names & {Requirement(w).name for w in argv if _requirement(w)}, argv
        assert "/opt/venv/bin/python" not in argv, argv
    install = command(commands, "neuron-env", "install")
    assert install[install.index("--") + 1 :] == wanted
    assert [c for c in commands if set(wanted) & set(c)] == [install]
    (step,) = [
        i.args for i in instructions if i.keyword == "RUN" and "neuron-env install" in i.args
    ]
    assert " -- " + " ".join(shlex.quote(w) for w in wanted) in step


def _requirement(word: str) -> bool:
    try:
        Requirement(word)
    except ValueError:
        return False
    return not word.startswith("-")


@pytest.fixture(scope="module")
def indexes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Indexes]:
    running = start_indexes(tmp_path_factory.mktemp("names-image-indexes"),
                            "user-dependency-on-neuron-name")  # fmt: skip
    yield running
    running.stop()


@pytest.mark.parametrize("backend", ["auto", "pip"])
def test_the_image_s_install_refuses_a_neuron_name_pulled_in_as_a_dependency(
    indexes: Indexes, tmp_path: Path, backend: str
) -> None:
    """``userdep-a`` depends on ``neuron-cc``, which only the default index has (an impostor
    whose .pth file leaves a marker): the Dockerfile's own install step fails, nothing built."""
    env = install_env(tmp_path, write_install_matrix(tmp_path / "matrix"))
    rendered = run_cli(env, "image", "render", "--torch", "2.14", *SOURCE, *indexes.args(),
                       "userdep-a==1.0")  # fmt: skip
    assert rendered.returncode == 0, rendered.stderr
    argv = command(run_commands(parse_dockerfile(rendered.stdout)), "neuron-env", "install")
    venv = tmp_path / "venv"
    here = {"/opt/venv": str(venv), "/usr/bin/python3": python_here()}
    argv = [here.get(word, word) for word in argv]
    if backend != "auto":  # the image runs auto (uv is neuron-env's dependency); pip too
        argv[argv.index("--") : argv.index("--")] = ["--backend", backend]
    result = run_cli(env, *argv[1:])
    err = flat(result.stderr)
    assert result.returncode == 1, err
    assert "neuron-cc 99.0" in err and "Traceback" not in result.stderr
    assert not venv.exists()
    assert not indexes.impostor_marker.exists(), "the impostor's .pth ran"
