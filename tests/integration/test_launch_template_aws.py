"""``neuron-env launch-template create`` and ``--resolve-ami`` against moto's server.

moto stores LaunchTemplateData verbatim, so a template created by the CLI reads back as exactly
what ``render --format json`` prints. The public Neuron SSM parameters are seeded (moto has none).
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from botocore.exceptions import ClientError

from neuron_env.cloud.launch_templates import apply_launch_template
from neuron_env.cloud.policy import iam_policy
from neuron_env.cloud.ssm import resolve_image_parameter
from tests.support.aws import REGION, MotoServer, seed_public_parameter
from tests.support.cli import CliRunner, Result

pytestmark = pytest.mark.integration

TEMPLATE = ["--release", "2.33.1", "--torch", "2.14", "--instance-type", "trn2.48xlarge",
            "--subnet", "subnet-0123456789abcdef0",
            "--security-group", "sg-0123456789abcdef0", "--neuron-env-source", "pypi"]  # fmt: skip
DLAMI_PARAMETER = "/aws/service/neuron/dlami/torch-neuronx-2.14.0/ubuntu-26.04/latest/image_id"
AMI = "ami-0aaaabbbbccccdddd"


def create(cli: CliRunner, aws: MotoServer, *extra: str, name: str = "trn2-train") -> Result:
    return cli("launch-template", "create", "--name", name, *TEMPLATE, *extra, env=aws.env())


def latest(aws: MotoServer, name: str = "trn2-train") -> dict[str, Any]:
    ec2 = aws.client("ec2")
    (version,) = ec2.describe_launch_template_versions(
        LaunchTemplateName=name, Versions=["$Latest"]
    )["LaunchTemplateVersions"]
    template = ec2.describe_launch_templates(LaunchTemplateNames=[name])["LaunchTemplates"][0]
    return {**version, "DefaultVersionNumber": template["DefaultVersionNumber"]}


def test_a_created_template_reads_back_as_the_rendered_data(
    cli: CliRunner, aws: MotoServer
) -> None:
    result = create(cli, aws)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Created launch template trn2-train (lt-")
    assert "version 1, default version 1." in result.stdout
    rendered = cli("launch-template", "render", *TEMPLATE, "--format", "json")
    stored = latest(aws)
    assert stored["LaunchTemplateData"] == json.loads(rendered.stdout)
    assert len(stored["LaunchTemplateData"]["NetworkInterfaces"]) == 17


def test_the_same_data_creates_no_new_version(cli: CliRunner, aws: MotoServer) -> None:
    assert create(cli, aws).returncode == 0
    again = create(cli, aws)
    assert again.returncode == 0
    assert again.stdout.startswith("Unchanged: launch template trn2-train")
    assert "already holds this data as version 1" in again.stdout
    assert latest(aws)["VersionNumber"] == 1


def test_changed_data_adds_a_version_and_keeps_the_default(cli: CliRunner, aws: MotoServer) -> None:
    assert create(cli, aws).returncode == 0
    changed = create(cli, aws, "--volume-size", "1024")
    assert changed.returncode == 0, changed.stderr
    assert changed.stdout.startswith("Added version 2 to launch template trn2-train")
    stored = latest(aws)
    assert stored["VersionNumber"] == 2 and stored["DefaultVersionNumber"] == 1
    assert stored["LaunchTemplateData"]["BlockDeviceMappings"][0]["Ebs"]["VolumeSize"] == 1024


def test_set_default_points_the_default_at_the_data(cli: CliRunner, aws: MotoServer) -> None:
    assert create(cli, aws).returncode == 0
    assert create(cli, aws, "--containers").returncode == 0
    assert latest(aws)["DefaultVersionNumber"] == 1
    again = create(cli, aws, "--containers", "--set-default")
    assert again.returncode == 0
    assert "already holds this data as version 2; default version 2." in again.stdout
    stored = latest(aws)
    assert (stored["VersionNumber"], stored["DefaultVersionNumber"]) == (2, 2)


def test_dry_run_checks_and_changes_nothing(cli: CliRunner, aws: MotoServer) -> None:
    result = create(cli, aws, "--dry-run")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("Dry run (permissions checked, nothing changed): would create")
    with pytest.raises(ClientError, match="NotFound"):
        aws.client("ec2").describe_launch_templates(LaunchTemplateNames=["trn2-train"])
    assert create(cli, aws).returncode == 0
    changed = create(cli, aws, "--volume-size", "600", "--set-default", "--dry-run")
    assert "would add version 2" in changed.stdout and "default version 2" in changed.stdout
    assert (latest(aws)["VersionNumber"], latest(aws)["DefaultVersionNumber"]) == (1, 1)


def test_json_output_reports_what_happened(cli: CliRunner, aws: MotoServer) -> None:
    doc = json.loads(create(cli, aws, "--json").stdout)
    assert doc["schema"] == "neuron-env/launch-template-create/v1"
    assert (doc["action"], doc["version"], doc["default_version"]) == ("created", 1, 1)
    assert doc["template_id"].startswith("lt-") and doc["region"] == REGION
    assert json.loads(create(cli, aws, "--json").stdout)["action"] == "unchanged"


def test_resolve_ami_reads_the_public_dlami_parameter(cli: CliRunner, aws: MotoServer) -> None:
    seed_public_parameter(DLAMI_PARAMETER, AMI)
    rendered = cli("launch-template", "render", *TEMPLATE, "--resolve-ami", env=aws.env())
    assert rendered.returncode == 0, rendered.stderr
    assert json.loads(rendered.stdout)["ImageId"] == AMI
    assert create(cli, aws, "--resolve-ami").returncode == 0
    assert latest(aws)["LaunchTemplateData"]["ImageId"] == AMI


def test_resolve_ami_without_the_parameter_says_how_to_find_it(
    cli: CliRunner, aws: MotoServer
) -> None:
    result = cli("launch-template", "render", *TEMPLATE, "--resolve-ami", env=aws.env())
    assert result.returncode == 1
    assert f"The SSM parameter {DLAMI_PARAMETER} does not exist in {REGION}" in squash(
        result.stderr
    )
    assert "get-parameters-by-path --path /aws/service/neuron" in squash(result.stderr)
    assert result.stdout == ""


def test_no_region_is_a_clear_error(cli: CliRunner, aws: MotoServer) -> None:
    env = {**aws.env(), "AWS_REGION": "", "AWS_DEFAULT_REGION": ""}
    result = cli("launch-template", "create", "--name", "x-lt", *TEMPLATE, env=env)
    assert result.returncode == 1
    assert "No AWS region is configured" in result.stderr and "--region" in result.stderr


def test_no_credentials_is_a_clear_error(cli: CliRunner, aws: MotoServer) -> None:
    env = {**aws.env(), "AWS_ACCESS_KEY_ID": "", "AWS_SECRET_ACCESS_KEY": ""}
    result = cli("launch-template", "create", "--name", "x-lt", *TEMPLATE, env=env)
    assert result.returncode == 1
    assert "No AWS credentials found for ec2:DescribeLaunchTemplates" in squash(result.stderr)
    assert "Traceback" not in result.stderr


def test_an_unreachable_endpoint_is_a_clear_error(cli: CliRunner, aws: MotoServer) -> None:
    env = {**aws.env(), "AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_MAX_ATTEMPTS": "1"}
    result = cli("launch-template", "create", "--name", "x-lt", *TEMPLATE, env=env)
    assert result.returncode == 1
    assert "Could not reach AWS for ec2:DescribeLaunchTemplates" in squash(result.stderr)


def squash(text: str) -> str:
    """stderr without the line wrapping of error paragraphs."""
    return " ".join(text.split())


# --- the IAM policy covers every call ----------------------------------------------------------


def test_the_printed_policy_is_valid_and_allows_every_call_the_commands_make(
    cli: CliRunner, aws: MotoServer
) -> None:
    printed = cli("launch-template", "policy")
    assert printed.returncode == 0
    aws.client("iam").create_policy(PolicyName="neuron-env-cli", PolicyDocument=printed.stdout)
    allowed = {a for s in json.loads(printed.stdout)["Statement"] for a in s["Action"]}
    calls: set[str] = set()
    ec2, ssm = aws.client("ec2"), aws.client("ssm")
    for client, prefix in ((ec2, "ec2"), (ssm, "ssm")):
        client.meta.events.register(
            "before-call", lambda model, prefix=prefix, **_: calls.add(f"{prefix}:{model.name}")
        )
    seed_public_parameter(DLAMI_PARAMETER, AMI)
    resolve_image_parameter(ssm, DLAMI_PARAMETER, REGION)
    for volume, dry_run in ((512, True), (512, False), (600, True), (600, False), (600, False)):
        data = {"ImageId": AMI, "BlockDeviceMappings": [{"Ebs": {"VolumeSize": volume}}]}
        apply_launch_template(ec2, "lt-policy", data, "test", set_default=True, dry_run=dry_run)
    assert calls <= allowed, f"not in the policy: {sorted(calls - allowed)}"
    assert {"ec2:CreateLaunchTemplate", "ec2:ModifyLaunchTemplate"} <= calls


def test_the_instance_policy_allows_only_the_status_tag() -> None:
    (statement,) = iam_policy("instance")["Statement"]
    assert statement["Action"] == "ec2:CreateTags"
    assert statement["Condition"]["ForAllValues:StringEquals"] == {
        "aws:TagKeys": ["neuron-env:status"]
    }
