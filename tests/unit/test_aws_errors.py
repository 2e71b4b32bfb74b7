"""AWS errors moto does not raise (denied, throttled, expired, invalid), through botocore's Stubber.

Each becomes one OperationFailed (exit 1) naming the action and the next step; and a denial
found by a permission check leaves nothing half-created.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from botocore.stub import ANY, Stubber

from neuron_env.cloud.launch_templates import apply_launch_template, fingerprint
from neuron_env.cloud.ssm import resolve_image_parameter
from neuron_env.errors import EXIT_FAILED, OperationFailed
from neuron_env.invocation import command

DATA = {"ImageId": "ami-0123456789abcdef0", "InstanceType": "trn2.48xlarge"}
TEMPLATE = {
    "LaunchTemplateId": "lt-0123456789abcdef0",
    "LaunchTemplateName": "trn2-train",
    "DefaultVersionNumber": 1,
    "LatestVersionNumber": 1,
}


@pytest.fixture
def ec2() -> Iterator[tuple[Any, Stubber]]:
    client = boto3.client(
        "ec2", region_name="us-east-2", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(client) as stubber:
        yield client, stubber
        stubber.assert_no_pending_responses()


def existing_template(stubber: Stubber, description: str) -> None:
    stubber.add_response("describe_launch_templates", {"LaunchTemplates": [TEMPLATE]})
    stubber.add_response(
        "describe_launch_template_versions",
        {"LaunchTemplateVersions": [{"VersionNumber": 1, "VersionDescription": description}]},
    )


def test_access_denied_names_the_action_and_points_at_the_policy(ec2: Any) -> None:
    client, stubber = ec2
    stubber.add_client_error(
        "describe_launch_templates", "UnauthorizedOperation", "You are not authorized."
    )
    with pytest.raises(OperationFailed) as caught:
        apply_launch_template(client, "trn2-train", DATA, "summary")
    assert caught.value.exit_code == EXIT_FAILED
    assert caught.value.message == (
        "AWS denied ec2:DescribeLaunchTemplates (UnauthorizedOperation): You are not authorized."
    )
    assert f"'{command('launch-template', 'policy')}'" in (caught.value.hint or "")


def test_throttling_says_the_command_is_safe_to_repeat(ec2: Any) -> None:
    client, stubber = ec2
    stubber.add_response("describe_launch_templates", {"LaunchTemplates": [TEMPLATE]})
    stubber.add_client_error(
        "describe_launch_template_versions", "RequestLimitExceeded", "Slow down"
    )
    with pytest.raises(
        OperationFailed, match="throttled ec2:DescribeLaunchTemplateVersions"
    ) as caught:
        apply_launch_template(client, "trn2-train", DATA, "summary")
    assert "safe to repeat" in (caught.value.hint or "")


def test_expired_credentials_say_to_refresh_them(ec2: Any) -> None:
    client, stubber = ec2
    stubber.add_client_error("describe_launch_templates", "RequestExpired", "Request has expired.")
    with pytest.raises(OperationFailed, match="rejected the credentials") as caught:
        apply_launch_template(client, "trn2-train", DATA, "summary")
    assert "aws sso login" in (caught.value.hint or "")


def test_invalid_parameters_are_reported_with_aws_s_message(ec2: Any) -> None:
    client, stubber = ec2
    stubber.add_client_error(
        "describe_launch_templates", "InvalidLaunchTemplateName.NotFoundException", "none"
    )
    stubber.add_client_error(
        "create_launch_template", "InvalidParameterValue", "Invalid value for InterfaceType"
    )
    with pytest.raises(OperationFailed) as caught:
        apply_launch_template(client, "trn2-train", DATA, "summary")
    assert caught.value.message == (
        "AWS refused ec2:CreateLaunchTemplate (InvalidParameterValue): "
        "Invalid value for InterfaceType"
    )


def test_a_denied_set_default_creates_no_version(ec2: Any) -> None:
    """The permission to change the default is checked (DryRun) before the version is created;
    an unstubbed create_launch_template_version call would fail this test."""
    client, stubber = ec2
    existing_template(stubber, "older data [neuron-env 0.0.9; data 0000000000000000]")
    stubber.add_client_error(
        "modify_launch_template",
        "UnauthorizedOperation",
        "You are not authorized to perform this operation.",
        expected_params={"LaunchTemplateName": "trn2-train", "DefaultVersion": "1", "DryRun": True},
    )
    with pytest.raises(OperationFailed, match=r"denied ec2:ModifyLaunchTemplate"):
        apply_launch_template(client, "trn2-train", DATA, "summary", set_default=True)


def test_a_denied_create_in_a_dry_run_is_reported(ec2: Any) -> None:
    client, stubber = ec2
    stubber.add_client_error(
        "describe_launch_templates", "InvalidLaunchTemplateName.NotFoundException", "none"
    )
    stubber.add_client_error(
        "create_launch_template",
        "UnauthorizedOperation",
        "not authorized",
        expected_params={"LaunchTemplateName": "trn2-train", "VersionDescription": ANY,
                         "LaunchTemplateData": DATA, "DryRun": True},
    )  # fmt: skip
    with pytest.raises(OperationFailed, match=r"denied ec2:CreateLaunchTemplate"):
        apply_launch_template(client, "trn2-train", DATA, "summary", dry_run=True)


def test_unchanged_data_makes_no_call_that_changes_anything(ec2: Any) -> None:
    client, stubber = ec2
    existing_template(stubber, f"summary [neuron-env 0.1.0; data {fingerprint(DATA)}]")
    result = apply_launch_template(client, "trn2-train", DATA, "summary")
    assert (result.action, result.version, result.default_version) == ("unchanged", 1, 1)


def test_ssm_access_denied_is_reported_for_the_parameter_lookup() -> None:
    ssm = boto3.client(
        "ssm", region_name="us-east-2", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(ssm) as stubber:
        stubber.add_client_error("get_parameter", "AccessDeniedException", "no access")
        with pytest.raises(OperationFailed, match=r"AWS denied ssm:GetParameter"):
            resolve_image_parameter(ssm, "/aws/service/neuron/x", "us-east-2")


def test_a_parameter_that_is_not_an_ami_id_is_refused() -> None:
    ssm = boto3.client(
        "ssm", region_name="us-east-2", aws_access_key_id="x", aws_secret_access_key="x"
    )
    with Stubber(ssm) as stubber:
        stubber.add_response(
            "get_parameter", {"Parameter": {"Name": "/aws/service/neuron/x", "Value": "oops"}}
        )
        with pytest.raises(OperationFailed, match="holds 'oops', which is not an AMI id"):
            resolve_image_parameter(ssm, "/aws/service/neuron/x", "us-east-2")
