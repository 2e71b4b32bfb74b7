"""``neuron-env image render``: golden Dockerfiles, hadolint, a parse of their structure, hostile
values, the JSON envelope, and the two commands the image runs checked against the real CLI.

Goldens live in ``tests/data/image/`` (regenerate with NEURON_ENV_UPDATE_GOLDEN=1, see
tests/support/golden.py): one per shipped release and OS with pip wheels, plus variants for each
way of getting neuron-env into the image.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_env.matrix import load_matrix
from tests.support.cli import DATA, REPO, CliRunner, Result, cli_runner
from tests.support.dockerfile import Instruction, command, labels, parse_dockerfile, run_commands
from tests.support.golden import check_golden
from tests.support.hosts import running_host, write_matrix
from tests.support.validators import HADOLINT

pytestmark = pytest.mark.integration

GOLDEN = DATA / "image"
SHA256 = "0123456789abcdef" * 4
WHEEL_URL = "https://artifacts.example.com/neuron-env/neuron_env-0.1.0-py3-none-any.whl"
WHEELHOUSE_URL = "https://artifacts.example.com/neuron-env/neuron-env-wheelhouse.tar.gz"
URL_SOURCE = ("--neuron-env-source", WHEEL_URL, "--neuron-env-sha256", SHA256)


def shipped_targets() -> list[tuple[str, str, str]]:
    """Every shipped release, PyTorch it pairs and OS it ships supported pip wheels for."""
    return [
        (str(release.version), pairing.torch_minor, os_id)
        for release in load_matrix([]).releases
        for pairing in release.pairings
        for os_id, entry in sorted(release.os.items())
        if entry.wheels and entry.support == "supported"
    ]


TARGETS = shipped_targets()
VARIANTS = {
    "wheelhouse-and-packages": (
        "--neuron-env-source", WHEELHOUSE_URL, "--neuron-env-sha256", SHA256,
        "transformers==4.57.1", "datasets[audio]==4.4.1",
    ),
    "index-with-sha256": ("--neuron-env-source", "pypi", "--neuron-env-sha256", SHA256),
    "index-unchecked": ("--neuron-env-source", "pypi"),
    "mirrors": (
        *URL_SOURCE, "--index-url", "https://mirror.example.com/simple",
        "--neuron-index", "https://neuron-mirror.example.com/",
        "--pytorch-index", "https://pytorch-mirror.example.com/whl/cpu", "transformers==4.57.1",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> CliRunner:
    return cli_runner(tmp_path_factory.mktemp("image"))


@functools.cache
def rendered(runner: CliRunner, *args: str) -> Result:
    return runner("image", "render", *args)


def render_ok(run: CliRunner, *args: str) -> str:
    """``image render ARGS`` (with ``--torch 2.14`` unless ARGS name one), which must succeed."""
    if "--torch" not in args:
        args = ("--torch", "2.14", *args)
    result = rendered(run, *args)
    assert result.returncode == 0, result.stderr
    return result.stdout


def all_rendered(run: CliRunner) -> dict[str, str]:
    files = {
        f"{release}-torch{torch}-{os_id}": render_ok(
            run, "--release", release, "--torch", torch, "--os", os_id, *URL_SOURCE
        )
        for release, torch, os_id in TARGETS
    }
    for name, args in VARIANTS.items():
        files[f"2.33.1-torch2.14-ubuntu-26.04-{name}"] = render_ok(
            run, "--release", "2.33.1", *args
        )
    return files


# --- goldens and hadolint ------------------------------------------------------------------------


def test_every_shipped_release_has_an_os_to_build_on() -> None:
    assert {release for release, _, _ in TARGETS} >= {"2.33.0", "2.33.1", "2.34.0"}


def test_rendered_dockerfiles_match_their_golden_files(run: CliRunner) -> None:
    for name, text in all_rendered(run).items():
        check_golden(GOLDEN / f"{name}.Dockerfile", text)


def test_every_rendered_dockerfile_passes_hadolint(run: CliRunner, tmp_path: Path) -> None:
    for name, text in all_rendered(run).items():
        path = tmp_path / f"{name}.Dockerfile"
        path.write_text(text)
        lint = subprocess.run([str(HADOLINT), str(path)], capture_output=True, text=True)
        assert lint.returncode == 0, f"{name}: {lint.stdout}{lint.stderr}"


# --- structure -----------------------------------------------------------------------------------


@pytest.mark.parametrize(("release", "torch", "os_id"), TARGETS)
def test_the_image_has_the_release_s_user_space_and_never_the_driver(
    run: CliRunner, release: str, torch: str, os_id: str
) -> None:
    text = render_ok(run, "--release", release, "--torch", torch, "--os", os_id, *URL_SOURCE)
    instructions = parse_dockerfile(text)
    assert instructions[0] == Instruction("FROM", "ubuntu:" + os_id.removeprefix("ubuntu-"))
    assert [i.keyword for i in instructions].count("FROM") == 1
    assert "dkms" not in " ".join(f"{i.keyword} {i.args}" for i in instructions)
    assert "--extra-index-url" not in text
    commands = run_commands(instructions)
    matrix_release = load_matrix([]).get(release)
    wanted = {
        name: pkg.version
        for name, pkg in matrix_release.system_packages.items()
        if pkg.role in ("runtime", "collectives", "tools")
    }
    apt_installs = [c for c in commands if c[:2] == ["apt-get", "install"]]
    neuron = [a for c in apt_installs for a in c if a.startswith("aws-neuronx")]
    assert sorted(neuron) == sorted(
        f"{name}={version}*" if version else name for name, version in wanted.items()
    )
    efa = command(commands, "./efa_installer.sh")
    assert "--skip-kmod" in efa
    gpg_verify = command(commands, "gpg", "--batch", "--verify")
    assert gpg_verify[-1] == "aws-efa-installer-latest.tar.gz"


def test_neuron_env_is_checked_against_its_sha256_before_it_is_installed(
    run: CliRunner,
) -> None:
    commands = run_commands(parse_dockerfile(render_ok(run, "--release", "2.33.1", *URL_SOURCE)))
    flat = [" ".join(c) for c in commands]
    wheel = "/tmp/neuron-env/neuron_env-0.1.0-py3-none-any.whl"
    check = flat.index("sha256sum --check --strict -")
    assert flat[check - 1] == f"printf %s  %s\\n {SHA256} {wheel}"
    assert flat.index(f"curl -fsSL --retry 3 --proto =https,http -o {wheel} {WHEEL_URL}") < check
    assert flat.index(f"/opt/neuron-env/tool/bin/pip install --no-cache-dir {wheel}") > check


def test_the_environment_is_built_by_neuron_env_install_and_checked_by_preflight(
    run: CliRunner,
) -> None:
    instructions = parse_dockerfile(render_ok(run, "--release", "2.33.1", *URL_SOURCE))
    commands = run_commands(instructions)
    assert command(commands, "neuron-env", "install") == [
        "neuron-env", "install", "--torch", "2.14", "--release", "2.33.1", "--venv", "/opt/venv",
        "--python", "/usr/bin/python3", "--yes",
    ]  # fmt: skip
    (health,) = [i for i in instructions if i.keyword == "HEALTHCHECK"]
    assert json.loads(health.args.split(" CMD ", 1)[1]) == [
        "neuron-env", "preflight", "--level", "0", "--release", "2.33.1", "--torch", "2.14",
        "--python", "/opt/venv/bin/python",
    ]  # fmt: skip
    env = " ".join(i.args for i in instructions if i.keyword == "ENV")
    assert 'VIRTUAL_ENV="/opt/venv"' in env
    assert 'PATH="/opt/venv/bin:/opt/aws/neuron/bin:' in env
    assert 'LD_LIBRARY_PATH="/opt/aws/neuron/lib:' in env
    assert "${LD_LIBRARY_PATH}" not in env  # an empty entry would mean the working directory


def test_oci_labels_carry_the_release_and_its_pins(run: CliRunner) -> None:
    found = labels(parse_dockerfile(render_ok(run, "--release", "2.33.1", *URL_SOURCE)))
    assert found["org.opencontainers.image.base.name"] == "ubuntu:26.04"
    assert found["org.opencontainers.image.title"].startswith("TorchNeuron: Neuron 2.33.1")
    assert (found["neuron-env.release"], found["neuron-env.torch"]) == ("2.33.1", "2.14.0")
    assert found["neuron-env.torch-neuronx"] == "2.14.3.0.*"
    assert found["neuron-env.pin.torch-neuronx"] == "==2.14.3.0.*"
    assert found["neuron-env.apt.aws-neuronx-runtime-lib"] == "2.35.33.0"


def test_user_packages_are_arguments_of_the_image_s_neuron_env_install(run: CliRunner) -> None:
    """One 'neuron-env install' builds the environment with them, as on a host; no other pip
    step installs anything into /opt/venv."""
    args = ("--release", "2.33.1", *VARIANTS["wheelhouse-and-packages"])
    commands = run_commands(parse_dockerfile(render_ok(run, *args)))
    install = command(commands, "neuron-env", "install")
    assert install[install.index("--") :] == [
        "--",
        "transformers==4.57.1",
        "datasets[audio]==4.4.1",
    ]
    assert not [c for c in commands if "/opt/venv/bin/python" in c or "--constraint" in c]
    wheelhouse = command(commands, "/opt/neuron-env/tool/bin/pip", "install", "--no-cache-dir",
                         "--no-index")  # fmt: skip
    assert wheelhouse[-3:] == ["--find-links", "/tmp/neuron-env/wheels", "neuron-env"]


def test_a_requirements_file_adds_its_packages(run: CliRunner, tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("# training\ntransformers==4.57.1  # the model code\n\naccelerate==1.11.0\n")
    text = render_ok(run, "--release", "2.33.1", *URL_SOURCE, "-r", str(reqs))
    install = command(run_commands(parse_dockerfile(text)), "neuron-env", "install")
    assert install[-3:] == ["--", "transformers==4.57.1", "accelerate==1.11.0"]


# --- hostile and unsupported input ---------------------------------------------------------------


@pytest.mark.parametrize(
    "base",
    ['ubuntu:26.04"', "ubuntu:26.04\nRUN id", "ubuntu:$(id)", "ubuntu:26.04 AS x", "Ubuntu:26.04",
     "ubuntu:${TAG}", "ubuntu:26.04'; id"],
)  # fmt: skip
def test_a_hostile_base_image_is_refused(run: CliRunner, base: str) -> None:
    result = run("image", "render", "--torch", "2.14", *URL_SOURCE, "--base", base)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: --base ")
    assert "Traceback" not in result.stderr


def test_a_base_image_reference_with_a_registry_and_digest_is_accepted(run: CliRunner) -> None:
    base = "public.ecr.aws/ubuntu/ubuntu:26.04@sha256:" + "a" * 64
    text = render_ok(run, "--release", "2.33.1", *URL_SOURCE, "--base", base)
    assert parse_dockerfile(text)[0] == Instruction("FROM", base)


@pytest.mark.parametrize(
    ("package", "message"),
    [
        ("transformers==4.57.1; $(id)", "is not a requirement neuron-env can put in an image"),
        ("x'; touch /tmp/pwned; '==1", "is not a requirement"),
        ("x==1\nRUN id", "is not a requirement"),
        ("x==1`id`", "is not a requirement"),
        ("transformers", "names no exact version"),
        ("transformers>=4", "names no exact version"),
        ("torch-neuronx==2.14.3.0.2187", "Neuron 2.34.0 pins torch-neuronx ==2.14.3.1.*"),
        ("torch==2.14.0", "comes from the matrix's indexes"),
        ("neuronx-distributed==0.15.0", "part of the legacy PyTorch/XLA stack"),
        ("libneuronxla==2.2.0", "part of the legacy PyTorch/XLA stack"),
    ],
)
def test_hostile_or_unpinned_packages_are_refused(
    run: CliRunner, package: str, message: str
) -> None:
    result = run("image", "render", "--torch", "2.14", *URL_SOURCE, package)
    assert result.returncode == 2
    assert result.stdout == ""
    assert message in " ".join(result.stderr.split())
    assert not Path("/tmp/pwned").exists()


@pytest.mark.parametrize(
    "line",
    ["--extra-index-url https://evil.example/simple", "-e .", "-r other.txt", "-i https://x/"],
)
def test_a_requirements_file_with_pip_options_is_refused(
    run: CliRunner, tmp_path: Path, line: str
) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text(f"transformers==4.57.1\n{line}\n")
    result = run("image", "render", "--torch", "2.14", *URL_SOURCE, "-r", str(reqs))
    assert result.returncode == 2
    assert "line 2" in result.stderr and "is a pip option" in result.stderr


@pytest.mark.parametrize("os_id", ["ubuntu-24.04", "ubuntu-22.04", "amzn-2023"])
def test_an_os_without_pip_wheels_is_refused_with_what_to_do(run: CliRunner, os_id: str) -> None:
    result = run("image", "render", "--torch", "2.14", "--release", "2.33.1", "--os", os_id,
                 *URL_SOURCE)  # fmt: skip
    assert result.returncode == 2
    said = " ".join(result.stderr.split())
    assert "publishes no torch-neuronx pip wheels for" in said
    assert "--os ubuntu-26.04" in said


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((), "Say where neuron-env itself comes from"),
        (("--neuron-env-source", WHEEL_URL), "needs --neuron-env-sha256"),
        (("--neuron-env-source", "ami"), "--neuron-env-source ami names the copy"),
        (("--neuron-env-source", "s3://bucket/neuron_env-0.1.0-py3-none-any.whl",
          "--neuron-env-sha256", SHA256), "aws s3 presign"),
    ],
)  # fmt: skip
def test_neuron_env_must_come_from_a_source_the_build_can_check(
    run: CliRunner, args: tuple[str, ...], message: str
) -> None:
    result = run("image", "render", "--torch", "2.14", *args)
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())


@pytest.mark.parametrize("refused", [(), ("--neuron-env-source", "ami")], ids=["none", "ami"])
def test_the_sources_a_refusal_offers_are_ones_image_render_accepts(
    run: CliRunner, refused: tuple[str, ...]
) -> None:
    """Neither s3:// (no AWS credentials in a build) nor ami (no neuron-env in the base image):
    every source the hint names, given as it says, renders."""
    result = run("image", "render", "--torch", "2.14", *refused)
    assert result.returncode == 2
    said = " ".join(result.stderr.split())
    hint = said[re.search(r"\. (Pass|Give) ", said).start() + 2 :]  # type: ignore[union-attr]
    assert "s3" not in hint and "ami" not in hint.replace("ami render", ""), hint
    assert "URL with --neuron-env-sha256" in hint and "pypi" in hint
    assert render_ok(run, *URL_SOURCE)
    assert render_ok(run, "--neuron-env-source", "pypi")


def test_a_hostile_matrix_dir_path_stays_inside_a_comment(run: CliRunner, tmp_path: Path) -> None:
    """The path reaches the file through the 'not shipped with neuron-env' warning."""
    shipped = load_matrix([]).get("2.33.1").origin.read_text()
    folder = tmp_path / 'm" $(id) `id` ${HOME} \\'
    folder.mkdir()
    (folder / "2.33.1.toml").write_text(shipped)
    plain = render_ok(run, "--release", "2.33.1", *URL_SOURCE)
    args = ("image", "render", "--torch", "2.14", "--release", "2.33.1", *URL_SOURCE)
    result = run("--matrix-dir", str(folder), *args)
    assert result.returncode == 0, result.stderr
    assert f"# WARNING: Neuron 2.33.1 comes from {folder}/2.33.1.toml" in result.stdout
    assert parse_dockerfile(result.stdout) == parse_dockerfile(plain)
    separator = tmp_path / "m\u2028RUN id"
    separator.mkdir()
    (separator / "2.33.1.toml").write_text(shipped)
    refused = run("--matrix-dir", str(separator), *args)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert "control character" in refused.stderr  # the matrix loader or the renderer


# --- JSON ----------------------------------------------------------------------------------------


def test_json_is_the_versioned_envelope_with_the_text_and_the_pins(run: CliRunner) -> None:
    text = render_ok(run, "--release", "2.33.1", *URL_SOURCE)
    doc = json.loads(render_ok(run, "--release", "2.33.1", *URL_SOURCE, "--format", "json"))
    assert set(doc) == {
        "schema", "neuron_env_version", "command", "status", "exit_code", "errors", "text", "pins",
        "notes",
    }  # fmt: skip
    assert doc["schema"] == "neuron-env/image-render/v1"
    assert doc["text"] == text
    pins = doc["pins"]
    assert (pins["release"], pins["torch"], pins["torch_neuronx"], pins["os"]) == (
        "2.33.1", "2.14.0", "2.14.3.0.*", "ubuntu-26.04",
    )  # fmt: skip
    assert {p["name"]: p["index"] for p in pins["python"]} == {
        "torch": "pytorch-cpu", "torch-neuronx": "neuron", "neuronx-cc": "neuron", "nki": "neuron",
    }  # fmt: skip
    assert {p["name"] for p in pins["system"]} == {
        "aws-neuronx-runtime-lib", "aws-neuronx-collectives", "aws-neuronx-tools",
    }  # fmt: skip
    assert pins["neuron_env"] == {"source": "url", "location": WHEEL_URL, "sha256": SHA256}


def test_output_goes_to_the_file_and_notes_to_stderr(run: CliRunner, tmp_path: Path) -> None:
    out = tmp_path / "Dockerfile"
    result = run(
        "image", "render", "--torch", "2.14", "--release", "2.33.1", *URL_SOURCE, "-o", str(out)
    )
    assert (result.returncode, result.stdout) == (0, "")
    assert out.read_text() == render_ok(run, "--release", "2.33.1", *URL_SOURCE)
    assert "docker run --device=/dev/neuron0" in result.stderr


# --- what the image runs, run for real -----------------------------------------------------------


MIRRORS = {
    "--index-url": "https://mirror.example.com/simple",
    "--neuron-index": "https://neuron-mirror.example.com/",
    "--pytorch-index": "https://pytorch-mirror.example.com/whl/cpu",
}


@pytest.mark.parametrize("mirrors", [{}, MIRRORS], ids=["matrix-indexes", "mirrors"])
def test_the_image_s_install_command_is_the_one_install_runs_with_the_same_pins(
    run: CliRunner, tmp_path: Path, mirrors: dict[str, str]
) -> None:
    """The Dockerfile's 'neuron-env install' is accepted by the real command, whose plan (the
    code the install tests cover) routes the same pins as the image's JSON says, through the
    user's mirrors when given."""
    given = [word for option, url in mirrors.items() for word in (option, url)]
    doc = json.loads(render_ok(run, "--release", "2.33.1", *URL_SOURCE, *given, "--format", "json"))
    argv = command(run_commands(parse_dockerfile(doc["text"])), "neuron-env", "install")
    venv = str(tmp_path / "venv")
    argv = [venv if a == "/opt/venv" else a for a in argv]
    argv = [sys.executable if a == "/usr/bin/python3" else a for a in argv]
    matrix = write_matrix("allows-test-python", tmp_path)  # the tests run on Python 3.11
    env = {
        "NEURON_ENV_MATRIX_DIR": str(matrix),
        "PIP_CONFIG_FILE": "/dev/null",
        "UV_NO_CONFIG": "1",
    }
    result = run(*argv[1:], "--dry-run", "--json", "--os", "ubuntu-26.04", env=env)
    assert result.returncode == 0, result.stderr
    plan = json.loads(result.stdout)["plan"]
    assert [(p["name"], p["spec"], p["route"]) for p in plan["packages"]] == [
        (p["name"], p["spec"], p["index"]) for p in doc["pins"]["python"]
    ]
    routes = {r["name"]: r["url"] for r in plan["routes"]}
    if mirrors:
        assert (routes["neuron"], routes["pytorch-cpu"], routes["default"]) == (
            MIRRORS["--neuron-index"].rstrip("/"), MIRRORS["--pytorch-index"],
            MIRRORS["--index-url"],
        )  # fmt: skip
        assert doc["pins"]["mirrors"] == {
            "index_url": MIRRORS["--index-url"],
            "neuron_index": MIRRORS["--neuron-index"],
            "pytorch_index": MIRRORS["--pytorch-index"],
        }
    else:
        assert routes["neuron"] == "https://pip.repos.neuron.amazonaws.com"
    assert not (tmp_path / "venv").exists()


def test_the_default_index_mirror_serves_the_build_s_own_pip_calls(run: CliRunner) -> None:
    args = ("--release", "2.33.1", "--neuron-env-source", "pypi", "--index-url",
            MIRRORS["--index-url"], "transformers==4.57.1")  # fmt: skip
    commands = run_commands(parse_dockerfile(render_ok(run, *args)))
    pips = [c for c in commands if c[0].endswith("/pip") and "install" in c]
    assert len(pips) == 1  # neuron-env itself; the user's packages go through its install
    install = command(commands, "neuron-env", "install")
    for argv in (*pips, install):
        assert argv[argv.index("--index-url") + 1] == MIRRORS["--index-url"]
    assert install[-2:] == ["--", "transformers==4.57.1"]


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("https://user:secret@mirror.example.com/simple", "holds credentials"),
        ("https://mirror.example.com/$(id)", "is not an index URL"),
        ("https://mirror.example.com/ x", "is not an index URL"),
        ("file:///etc/passwd", "is not an index URL"),
    ],
)
def test_a_mirror_that_cannot_go_in_an_image_is_refused(
    run: CliRunner, url: str, message: str
) -> None:
    result = run("image", "render", "--torch", "2.14", *URL_SOURCE, "--neuron-index", url)
    assert (result.returncode, result.stdout) == (2, "")
    assert message in result.stderr


@pytest.mark.parametrize(("marker", "code"), [("dockerenv", 0), ("environ", 0), ("none", 1)])
def test_the_healthcheck_passes_inside_the_container_it_describes(
    run: CliRunner, tmp_path: Path, marker: str, code: int
) -> None:
    """The HEALTHCHECK's preflight on a container's view of a Trainium host (the host's devices
    passed in, user-space packages only) passes: no driver package is expected there. Docker
    leaves /.dockerenv; under containerd only the image's ENV container=oci says it. The same
    files outside a container fail: there, aws-neuronx-dkms is missing."""
    doc = json.loads(render_ok(run, "--release", "2.33.1", *URL_SOURCE, "--format", "json"))
    instructions = parse_dockerfile(doc["text"])
    (health,) = [i for i in instructions if i.keyword == "HEALTHCHECK"]
    argv = json.loads(health.args.split(" CMD ", 1)[1])
    assert any(i.args.startswith('container="oci"') for i in instructions if i.keyword == "ENV")
    with running_host("container-image", tmp_path) as host:
        if marker != "dockerenv":
            (host.sysroot / ".dockerenv").unlink()
        if marker == "environ":
            proc = host.sysroot / "proc" / "1"
            proc.mkdir(parents=True)
            (proc / "environ").write_bytes(b"PATH=/opt/venv/bin\0container=oci\0")
        argv = [str(host.python) if a == "/opt/venv/bin/python" else a for a in argv]
        result = run(*argv[1:], "--sysroot", str(host.sysroot), env=host.env)
    assert result.returncode == code, result.stdout + result.stderr
    if marker == "none":
        assert "aws-neuronx-dkms" in result.stdout


def test_the_kubernetes_example_runs_the_image_s_preflight_before_training(
    run: CliRunner,
) -> None:
    import yaml

    job = yaml.safe_load((REPO / "examples" / "kubernetes" / "image-job.yaml").read_text())
    pod = job["spec"]["template"]["spec"]
    (init,) = pod["initContainers"]
    (trainer,) = pod["containers"]
    doc = json.loads(render_ok(run, "--release", "2.33.1", *URL_SOURCE, "--format", "json"))
    (health,) = [i for i in parse_dockerfile(doc["text"]) if i.keyword == "HEALTHCHECK"]
    assert init["command"] == json.loads(health.args.split(" CMD ", 1)[1])
    assert init["image"] == trainer["image"]
    devices = "aws.amazon.com/neuron"
    assert init["resources"]["limits"][devices] == trainer["resources"]["limits"][devices] > 0


def test_a_package_with_a_marker_arrives_as_one_word(run: CliRunner, tmp_path: Path) -> None:
    package = "accelerate[testing]==1.11.0; python_version >= \"3.12\" and sys_platform == 'linux'"
    text = render_ok(run, "--release", "2.33.1", *URL_SOURCE, package)
    install = command(run_commands(parse_dockerfile(text)), "neuron-env", "install")
    assert (
        install[-1]
        == 'accelerate[testing]==1.11.0; python_version >= "3.12" and sys_platform == "linux"'
    )
    path = tmp_path / "Dockerfile"
    path.write_text(text)
    lint = subprocess.run([str(HADOLINT), str(path)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout
