"""Rendered launch templates and AMI recipes: golden files, and checks by the formats' own tools.

Each ``tests/data/cloud/<scenario>/scenario.toml`` names a command line and its golden output
(regenerate with NEURON_ENV_UPDATE_GOLDEN=1, see tests/support/golden.py). Besides the goldens:
LaunchTemplateData validates against botocore's CreateLaunchTemplate model, CloudFormation passes
cfn-lint run plainly (no check ignored), Terraform and Packer parse as HCL2, every shell script
passes ``bash -n`` and shellcheck 0.11, and the four launch-template formats describe the same
template.
"""

from __future__ import annotations

import base64
import functools
import json
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import botocore.session
import hcl2
import pytest
import tomllib
import yaml
from botocore.validate import ParamValidator
from packaging.specifiers import SpecifierSet

from tests.support.cli import DATA, Result, cli_runner, machine_env
from tests.support.golden import BOOTSTRAP, check_golden, redact_bootstrap
from tests.support.hcl import unquoted
from tests.support.validators import CFN_LINT, assert_shellcheck_clean

pytestmark = pytest.mark.integration

SCENARIOS = DATA / "cloud"
NAMES = sorted(p.parent.name for p in SCENARIOS.glob("*/scenario.toml"))


@dataclass(frozen=True)
class Rendered:
    returncode: int
    stdout: str
    stderr: str
    files: dict[str, str]


def run_cli(*args: str, cwd: Path | None = None) -> Result:
    return cli_runner(cwd, base_env=machine_env("AWS_"))(*args)


@functools.cache
def rendered(name: str, workdir: Path) -> Rendered:
    command = scenario(name)["command"]
    out = workdir / name
    extra = ["--output", str(out)] if command[0] == "ami" else []
    proc = run_cli(*command, *extra)
    files = {p.name: p.read_text() for p in sorted(out.iterdir())} if out.is_dir() else {}
    return Rendered(proc.returncode, proc.stdout, proc.stderr, files)


def scenario(name: str) -> dict[str, Any]:
    with (SCENARIOS / name / "scenario.toml").open("rb") as handle:
        doc: dict[str, Any] = tomllib.load(handle)
    return doc


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("rendered")


def launch_template_names(fmt: str) -> list[str]:
    return [
        n for n in NAMES if "--format" in scenario(n)["command"] and fmt in scenario(n)["command"]
    ]


def ami_names() -> list[str]:
    return [n for n in NAMES if scenario(n)["command"][0] == "ami"]


# --- goldens ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_rendered_output_matches_its_golden_file(name: str, workdir: Path) -> None:
    result = rendered(name, workdir)
    assert result.returncode == 0, result.stderr
    expected = SCENARIOS / name / scenario(name)["expected"]
    if result.files:
        assert result.files.pop("bootstrap.sh") == BOOTSTRAP
        for file_name, text in result.files.items():
            check_golden(expected / file_name, text)
        return
    check_golden(expected, normalized(result.stdout, expected.suffix))


def normalized(text: str, suffix: str) -> str:
    """The output with the embedded bootstrap script checked and replaced by a marker."""
    if suffix == ".json":
        data = json.loads(text)
        script = base64.b64decode(data["UserData"]).decode()
        redact_bootstrap(script)  # checks the embedded script
        data["UserData"] = "[base64 of the user data; see the user-data scenario]"
        return json.dumps(data, indent=2) + "\n"
    return redact_bootstrap(text, hcl=suffix == ".tf")


# --- the formats' own tools ---------------------------------------------------------------------


@pytest.mark.parametrize("name", launch_template_names("json"))
def test_launch_template_data_validates_against_the_ec2_api_model(name: str, workdir: Path) -> None:
    data = json.loads(rendered(name, workdir).stdout)
    model = botocore.session.get_session().get_service_model("ec2")
    shape = model.operation_model("CreateLaunchTemplate").input_shape
    report = ParamValidator().validate(
        {"LaunchTemplateName": "neuron", "LaunchTemplateData": data}, shape
    )
    assert not report.has_errors(), report.generate_report()


def test_every_cloudformation_template_passes_plain_cfn_lint(workdir: Path) -> None:
    """``cfn-lint FILE...`` as a user runs it, every check on (E3628 included: the instance type
    is a parameter allowed one value, so cfn-lint's lagging per-region list is not consulted)."""
    paths = []
    for name in [*launch_template_names("cloudformation"), "same-template"]:
        path = workdir / f"{name}.yaml"
        text = rendered(name, workdir).stdout if name in NAMES else same_cloudformation()
        path.write_text(text)
        paths.append(str(path))
    lint = subprocess.run([str(CFN_LINT), *paths], capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.parametrize("name", [*launch_template_names("terraform"), *ami_names()])
def test_terraform_and_packer_parse_as_hcl2(name: str, workdir: Path) -> None:
    result = rendered(name, workdir)
    text = result.files.get("neuron.pkr.hcl", result.stdout)
    assert hcl2.loads(text)


@pytest.mark.parametrize("name", ami_names())
def test_the_packer_recipe_declares_the_packer_version_its_plugins_block_needs(
    name: str, workdir: Path
) -> None:
    """``required_plugins`` and ``packer init`` came in Packer 1.7: an older Packer must refuse
    the recipe up front, not half-read it. (No Packer binary of 1.7 or later can be installed
    here from the package registries: Debian's is 1.6.6, so ``packer validate`` cannot run.)"""
    (block,) = unquoted(hcl2.loads(rendered(name, workdir).files["neuron.pkr.hcl"]))["packer"]
    required = SpecifierSet(block["required_version"])
    assert "1.7.0" in required and "1.6.6" not in required
    (plugins,) = block["required_plugins"]
    assert plugins["amazon"]["source"] == "github.com/hashicorp/amazon"


def shell_scripts(workdir: Path) -> list[tuple[str, str]]:
    scripts = [("scripts/bootstrap.sh", BOOTSTRAP)]
    for name in launch_template_names("user-data"):
        scripts.append((name, rendered(name, workdir).stdout))
    for name in ami_names():
        scripts.append((f"{name}/provision.sh", rendered(name, workdir).files["provision.sh"]))
    return scripts


def test_every_rendered_shell_script_passes_bash_n_and_shellcheck(workdir: Path) -> None:
    paths = []
    for label, text in shell_scripts(workdir):
        path = workdir / (label.replace("/", "_") + ".sh")
        path.write_text(text)
        syntax = subprocess.run(["bash", "-n", str(path)], capture_output=True, text=True)
        assert syntax.returncode == 0, f"{label}: {syntax.stderr}"
        paths.append(path)
    assert_shellcheck_clean(*paths)


# --- one template, four formats ------------------------------------------------------------------

SAME_TEMPLATE = [
    "launch-template", "render", "--release", "2.33.1", "--torch", "2.14",
    "--instance-type", "trn2.48xlarge", "--subnet", "subnet-0123456789abcdef0",
    "--security-group", "sg-0123456789abcdef0", "--capacity-block", "cr-0123456789abcdef0",
    "--key-name", "ops", "--iam-instance-profile", "neuron-host",
    "--neuron-env-source", "https://artifacts.example.com/neuron_env-0.1.0-py3-none-any.whl",
    "--neuron-env-sha256", "0123456789abcdef" * 4,
]  # fmt: skip


@functools.cache
def same_cloudformation() -> str:
    proc = run_cli(*SAME_TEMPLATE, "--format", "cloudformation")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


@pytest.fixture(scope="module")
def formats() -> dict[str, str]:
    out = {}
    for fmt in ("json", "cloudformation", "terraform", "user-data"):
        proc = run_cli(*SAME_TEMPLATE, "--format", fmt)
        assert proc.returncode == 0, proc.stderr
        out[fmt] = proc.stdout
    return out


def test_json_user_data_is_the_rendered_user_data(formats: dict[str, str]) -> None:
    data = json.loads(formats["json"])
    assert base64.b64decode(data["UserData"]).decode() == formats["user-data"]


def test_cloudformation_holds_the_same_launch_template_data(formats: dict[str, str]) -> None:
    data = json.loads(formats["json"])
    template = yaml.safe_load(formats["cloudformation"])
    cfn = template["Resources"]["NeuronLaunchTemplate"]["Properties"]["LaunchTemplateData"]
    # The instance type is a parameter that allows exactly the rendered type, and defaults to it.
    assert cfn.pop("InstanceType") == {"Ref": "InstanceType"}
    parameter = template["Parameters"]["InstanceType"]
    assert parameter["AllowedValues"] == [parameter["Default"]] == [data.pop("InstanceType")]
    assert cfn.pop("UserData") == {"Fn::Base64": formats["user-data"]}
    data.pop("UserData")
    assert cfn == data


def test_terraform_holds_the_same_launch_template_data(formats: dict[str, str]) -> None:
    data = json.loads(formats["json"])
    tf = unquoted(hcl2.loads(formats["terraform"]))["resource"][0]["aws_launch_template"]["neuron"]
    assert (tf["image_id"], tf["instance_type"], tf["key_name"]) == (
        data["ImageId"], data["InstanceType"], data["KeyName"],
    )  # fmt: skip
    assert tf["iam_instance_profile"] == [{"name": "neuron-host"}]
    assert tf["metadata_options"] == [snake(data["MetadataOptions"])]
    assert tf["network_interfaces"] == [
        {**snake({k: v for k, v in nic.items() if k != "Groups"}), "security_groups": nic["Groups"]}
        for nic in data["NetworkInterfaces"]
    ]
    (mapping,) = data["BlockDeviceMappings"]
    assert tf["block_device_mappings"] == [
        {"device_name": mapping["DeviceName"], "ebs": [snake(mapping["Ebs"])]}
    ]
    assert tf["instance_market_options"] == [{"market_type": "capacity-block"}]
    assert tf["capacity_reservation_specification"] == [
        {"capacity_reservation_target": [{"capacity_reservation_id": "cr-0123456789abcdef0"}]}
    ]
    tags = {t["Key"]: t["Value"] for t in data["TagSpecifications"][0]["Tags"]}
    assert tf["tag_specifications"] == [{"resource_type": "instance", "tags": tags}]
    assert terraform_user_data(tf["user_data"]) == formats["user-data"]


def terraform_user_data(expression: str) -> str:
    head = '${base64encode("<<NEURON_ENV_USER_DATA\n'
    tail = '\nNEURON_ENV_USER_DATA")}'
    assert expression.startswith(head) and expression.endswith(tail)
    body = expression[len(head) : -len(tail)] + "\n"
    return body.replace("$${", "${").replace("%%{", "%{")


def snake(data: dict[str, Any]) -> dict[str, Any]:
    """``HttpPutResponseHopLimit`` → ``http_put_response_hop_limit``, the AWS provider's names."""

    def name(key: str) -> str:
        return "".join(f"_{c.lower()}" if c.isupper() else c for c in key).lstrip("_")

    return {name(k): v for k, v in data.items()}


def test_unconfirmed_ssm_parameters_are_flagged_on_stderr_and_in_comments(
    formats: dict[str, str],
) -> None:
    proc = run_cli(*SAME_TEMPLATE, "--format", "json")
    assert (
        "warning: The SSM parameter /aws/service/neuron/dlami/torch-neuronx-2.14.0" in proc.stderr
    )
    for fmt in ("cloudformation", "terraform"):
        assert (
            "# WARNING: The SSM parameter /aws/service/neuron/dlami/torch-neuronx-2.14.0/"
            in (formats[fmt])
        )


def test_ami_render_never_overwrites_a_different_file_without_force(tmp_path: Path) -> None:
    out = tmp_path / "recipe"
    out.mkdir()
    (out / "provision.sh").write_text("# my own edits\n")
    args = ["ami", "render", "--release", "2.33.1", "--torch", "2.14", "--output", str(out),
            "--neuron-env-source", "pypi"]  # fmt: skip
    refused = run_cli(*args)
    assert refused.returncode == 2
    assert "already holds different provision.sh; nothing was written" in " ".join(
        refused.stderr.split()
    )
    assert sorted(p.name for p in out.iterdir()) == ["provision.sh"]
    assert run_cli(*args, "--force").returncode == 0
    assert run_cli(*args).returncode == 0  # the same files again: nothing to refuse
    assert (out / "bootstrap.sh").read_text() == BOOTSTRAP


def test_ami_render_hint_names_no_nonexistent_ami_option(tmp_path: Path) -> None:
    """Issue 30's paper cut: the hint offered --ami, an option ami render does not have."""
    out = tmp_path / "recipe"
    result = run_cli("ami", "render", "--torch", "2.14", "--output", str(out),
                     "--neuron-env-source", "ami")  # fmt: skip
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "Give a URL or s3:// object with --neuron-env-sha256, or pypi." in message
    assert "--ami" not in message
    assert not out.exists()


def test_the_build_line_quotes_a_folder_with_a_space(tmp_path: Path) -> None:
    """The line was 'Build it: cd /tmp/my ami && packer ...': pasted, it failed at cd."""
    out = tmp_path / "my ami"
    result = run_cli("ami", "render", "--torch", "2.14", "--output", str(out),
                     "--neuron-env-source", "pypi")  # fmt: skip
    assert result.returncode == 0, result.stderr
    (line,) = [x for x in result.stdout.splitlines() if x.startswith("Build it: ")]
    words = shlex.split(line.removeprefix("Build it: "))
    assert words[:3] == ["cd", str(out), "&&"]
