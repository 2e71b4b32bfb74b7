"""The ``matrix`` commands through the real console script, as a user runs them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from neuron_env import __version__
from tests.support.cli import DATA, CliRunner
from tests.support.pasted import in_fresh_shell

pytestmark = pytest.mark.integration

NEWER = str(DATA / "matrices" / "newer")
BAD = sorted((DATA / "matrices" / "bad").glob("*/2.99.0.toml"))


def test_version_from_the_console_script_and_python_m(cli: CliRunner) -> None:
    assert cli("--version").stdout.strip() == f"neuron-env {__version__}"
    proc = subprocess.run(
        [sys.executable, "-m", "neuron_env", "--version"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == f"neuron-env {__version__}"


def test_help_lists_the_matrix_commands_with_examples(cli: CliRunner) -> None:
    result = cli("matrix", "--help")
    assert result.returncode == 0
    for command in ("list", "show", "resolve", "diff", "validate"):
        assert command in result.stdout
    assert "Example: neuron-env matrix resolve" in cli("matrix", "resolve", "--help").stdout


def test_resolve_json_for_the_issue_example(cli: CliRunner) -> None:
    result = cli(
        "matrix",
        "resolve",
        "--torch",
        "2.14",
        "--python",
        "3.12",
        "--os",
        "ubuntu-26.04",
        "--release",
        "2.33.0",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == "neuron-env/matrix-resolve/v1"
    pins = {p["name"]: p for p in doc["target"]["pins"]}
    assert pins["torch"]["spec"] == "==2.14.0"
    assert pins["torch-neuronx"]["spec"] == "==2.14.3.0.*"
    assert pins["torch-neuronx"]["index"] == "neuron"
    assert [n for n in doc["target"]["notes"] if n["level"] == "warning"] == []


def test_resolve_on_ubuntu_24_04_answers_with_a_warning_and_exit_0(cli: CliRunner) -> None:
    args = [
        "matrix",
        "resolve",
        "--torch",
        "2.14",
        "--python-version",
        "3.12",
        "--release",
        "2.33.0",
    ]
    result = cli(*args, "--os", "ubuntu-24.04")
    assert result.returncode == 0
    assert "! Neuron 2.33.0 publishes no torch-neuronx pip wheels for Ubuntu 24.04" in result.stdout
    assert "torch-neuronx" in result.stdout and "==2.14.3.0.*" in result.stdout


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--torch", "2.15"], "PyTorch 2.13 and 2.14 only, not 2.15"),
        (["--torch", "2.15", "--release", "2.33.0"], "PyTorch 2.13 and 2.14 only, not 2.15"),
        (["--torch", "2.14", "--python-version", "3.11"], "supports Python 3.12–3.14, not 3.11"),
        (["--torch", "2.14", "--python-version", "3"], "--python-version '3' is not a version"),
        (["--torch", "2.14", "--instance-type", "trn1.32xlarge"], "Trn1 is not supported"),
        (["--torch", "2.14", "--release", "1.0.0"], "Known releases: 2.33.0, 2.33.1, 2.34.0"),
    ],
)
def test_unsupported_requests_exit_2_with_a_message_and_no_traceback(
    cli: CliRunner, args: list[str], says: str
) -> None:
    result = cli("matrix", "resolve", *args)
    assert result.returncode == 2
    assert result.stderr.startswith("error: ")
    assert says in " ".join(result.stderr.split())
    assert "Traceback" not in result.stderr
    assert result.stdout == ""


def test_the_old_python_spelling_still_resolves_and_says_it_is_deprecated(cli: CliRunner) -> None:
    """``--python X.Y`` was the version before ``--python-version``: scripts keep working."""
    wanted = ["matrix", "resolve", "--torch", "2.14", "--release", "2.33.0", "--json"]
    old, new = cli(*wanted, "--python", "3.12"), cli(*wanted, "--python-version", "3.12")
    assert (old.returncode, new.returncode) == (0, 0), old.stderr + new.stderr
    assert old.stdout == new.stdout and json.loads(old.stdout)["target"]["python"] == "3.12"
    (note,) = old.stderr.splitlines()
    assert "--python X.Y is deprecated" in note and "--python-version" in note
    assert new.stderr == ""
    assert cli(*wanted, "--python", "3.11").returncode == 2  # still judged like the new spelling
    both = cli(*wanted, "--python", "3.12", "--python-version", "3.13")
    assert both.returncode == 2 and "Traceback" not in both.stderr
    (error,) = json.loads(both.stdout)["errors"]
    assert "--python 3.12 and --python-version 3.13 disagree" in error["message"]
    assert "--python-version" in cli("matrix", "resolve", "--help").stdout
    assert "--python " not in cli("matrix", "resolve", "--help").stdout  # hidden


def test_debug_shows_the_traceback(cli: CliRunner) -> None:
    result = cli("--debug", "matrix", "resolve", "--torch", "2.15")
    assert result.returncode == 2
    assert "Traceback" in result.stderr and "UnsupportedCombination" in result.stderr


def test_unknown_option_is_bad_input(cli: CliRunner) -> None:
    assert cli("matrix", "resolve", "--torch", "2.14", "--pyhton", "3.12").returncode == 2


def test_list_shows_every_release_and_marks_the_latest(cli: CliRunner) -> None:
    result = cli("matrix", "list")
    assert result.returncode == 0
    for version in ("2.33.0", "2.33.1", "2.34.0 (latest)"):
        assert version in result.stdout


def test_list_ends_with_a_details_command_that_runs_as_pasted(
    cli: CliRunner, tmp_path: Path
) -> None:
    last = cli("matrix", "list").stdout.strip().splitlines()[-1]
    pasted = last.removeprefix("Details of one release: ")
    assert pasted.endswith(" matrix show --release 2.34.0")  # a real release, no VERSION
    done = in_fresh_shell(pasted, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Neuron 2.34.0" in done.stdout


def test_show_text_marks_unconfirmed_facts(cli: CliRunner) -> None:
    result = cli("matrix", "show", "--release", "2.34.0")
    assert result.returncode == 0
    assert "==2.* (unconfirmed)" in result.stdout
    assert "WRONG PACKAGE" in result.stdout


def test_show_json_carries_the_whole_release(cli: CliRunner) -> None:
    doc = json.loads(cli("matrix", "show", "--release", "2.33.0", "--json").stdout)
    release = doc["release"]
    assert release["release"]["version"] == "2.33.0"
    assert release["os"]["ubuntu-22.04"]["support"] == "disputed"
    assert release["sources"]["gh-torch-neuronx"].startswith("https://github.com/")


@pytest.mark.parametrize("how", ["option", "environment"])
def test_a_matrix_directory_adds_a_newer_release(cli: CliRunner, how: str) -> None:
    if how == "option":
        result = cli("--matrix-dir", NEWER, "matrix", "resolve", "--torch", "2.15", "--json")
    else:
        result = cli(
            "matrix", "resolve", "--torch", "2.15", "--json", env={"NEURON_ENV_MATRIX_DIR": NEWER}
        )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["target"]["release"] == "2.99.0"


def test_a_broken_matrix_directory_fails_every_command_with_exit_2(cli: CliRunner) -> None:
    broken = str(BAD[0].parent)
    result = cli("matrix", "list", env={"NEURON_ENV_MATRIX_DIR": broken})
    assert result.returncode == 2
    assert "2.99.0.toml" in result.stderr


def test_validate_reports_each_file_and_exits_2_when_any_is_broken(cli: CliRunner) -> None:
    good = DATA / "matrices" / "newer" / "2.99.0.toml"
    result = cli("matrix", "validate", str(good), *map(str, BAD))
    assert result.returncode == 2
    lines = result.stdout.splitlines()
    assert lines[0].startswith(f"✓ {good}")
    assert len([line for line in lines if line.startswith("✗")]) == len(BAD)


def test_validate_passes_the_shipped_files(cli: CliRunner) -> None:
    from neuron_env.resources import shipped_matrix_dir

    files = sorted(map(str, shipped_matrix_dir().glob("*.toml")))
    result = cli("matrix", "validate", *files, "--json")
    assert result.returncode == 0
    assert all(row["valid"] for row in json.loads(result.stdout)["files"])


def test_diff_reports_changed_pins_between_releases(cli: CliRunner) -> None:
    result = cli("matrix", "diff", "2.33.0", "2.33.1")
    assert result.returncode == 0
    assert "aws-neuronx-dkms.version: 2.31.7.0 → 2.31.8.0" in result.stdout
    doc = json.loads(cli("matrix", "diff", "2.33.1", "2.34.0", "--json").stdout)
    changes = {tuple(c["path"][1:]): c for c in doc["changes"] if c["path"][0] == "pairings"}
    assert changes["torch-2.13", "torch-neuronx"]["kind"] == "changed"  # 2.13.3.0 → 2.13.3.1
    assert changes["torch-2.13", "confirmed"]["kind"] == "changed"  # its Pythons unconfirmed


def test_show_lists_the_companions_with_their_unconfirmed_facts(cli: CliRunner) -> None:
    result = cli("matrix", "show", "--release", "2.34.0")
    assert result.returncode == 0
    assert "Companions (installed only on request" in result.stdout
    assert "==0.2.2+neuron.2 (unconfirmed)" in result.stdout
    assert "import torchao" in result.stdout
    doc = json.loads(cli("matrix", "show", "--release", "2.34.0", "--json").stdout)
    torchao = doc["release"]["companions"]["torchao-neuron"]
    assert (torchao["version"], torchao["families"], torchao["index"]) == (
        "0.18.0+neuron.1",
        ["trn3"],
        "neuron",
    )


def test_resolve_names_the_companions_the_target_can_take(cli: CliRunner) -> None:
    args = ["matrix", "resolve", "--torch", "2.14", "--release", "2.33.1"]
    text = cli(*args).stdout
    assert "Companions (only on request)" in text and "==0.2.2+neuron.1" in text
    doc = json.loads(cli(*args, "--json").stdout)
    (titan,) = doc["target"]["companions"]
    assert titan["name"] == "torchtitan-neuron" and titan["spec"] == "==0.2.2+neuron.1"
    assert titan["index"] == "neuron" and titan["families_confirmed"] is False
    trn2 = cli("matrix", "resolve", "--torch", "2.14", "--instance-type", "trn2.48xlarge", "--json")
    assert "torchao-neuron" not in {
        c["name"] for c in json.loads(trn2.stdout)["target"]["companions"]
    }


def test_did_you_mean_for_an_unknown_instance_type_and_check_id(cli: CliRunner) -> None:
    typo = cli("matrix", "resolve", "--torch", "2.14", "--instance-type", "trn2.48xlarg")
    assert typo.returncode == 0, typo.stderr
    assert "Did you mean 'trn2.48xlarge'?" in " ".join(typo.stdout.split())
    unknown_family = cli("matrix", "resolve", "--torch", "2.14", "--instance-type", "tr2.48xlarge")
    assert unknown_family.returncode == 2
    assert "Did you mean 'trn2.48xlarge'?" in " ".join(unknown_family.stderr.split())
    for option, typed, meant in (("--check", "driver.modul", "driver.module"),
                                 ("--skip", "env.cach", "env.cache")):  # fmt: skip
        result = cli("doctor", option, typed)
        assert result.returncode == 2
        assert f"Unknown check id '{typed}'; did you mean '{meant}'?" in result.stderr


@pytest.mark.parametrize(
    ("written", "meant"),
    [(("--os", "Ubuntu-26.04"), ("--os", "ubuntu-26.04")),
     (("--instance-type", " TRN2.48XLARGE"), ("--instance-type", "trn2.48xlarge"))],
    ids=["os", "instance-type"],
)  # fmt: skip
def test_an_os_or_instance_type_in_capitals_means_the_same(
    cli: CliRunner, written: tuple[str, str], meant: tuple[str, str]
) -> None:
    """``--instance-type TRN2.48XLARGE`` said "'TRN2.48XLARGE' is not a Trainium instance ...; it
    needs a trn2 or trn3 instance" (exit 2); EC2 and /etc/os-release spell both in lower case."""
    args = ("matrix", "resolve", "--torch", "2.14", "--format", "json")
    as_written, as_meant = cli(*args, *written), cli(*args, *meant)

    assert as_written.returncode == as_meant.returncode == 0, as_written.stderr
    assert json.loads(as_written.stdout) == json.loads(as_meant.stdout)


@pytest.mark.parametrize("group", [(), ("fleet",), ("matrix",), ("launch-template",)])
def test_a_group_without_its_command_shows_its_help_as_help_shows_it(
    cli: CliRunner, group: tuple[str, ...]
) -> None:
    """``neuron-env`` alone printed its help as one "error:" paragraph, newlines as ``\\x0a``."""
    bare = cli(*group)
    helped = cli(*group, "--help")

    assert bare.returncode == 2  # no command: as click ends it
    assert bare.stdout == ""
    assert bare.stderr == helped.stdout
    assert "\\x0a" not in bare.stderr and not bare.stderr.startswith("error:")
