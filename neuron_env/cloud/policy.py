"""The minimal IAM policies: for running neuron-env's AWS commands, and for the instances.

* ``cli``: ``launch-template create`` (describe, create, new version, set default) and
  ``--resolve-ami`` (read the public Neuron DLAMI parameters).
* ``instance``: the instance profile of launched hosts, so boot-time validation can publish its
  result as the ``neuron-env:status`` tag. Only that tag key, only on instances that were launched
  with it (the launch template sets it to ``pending``).
"""

from __future__ import annotations

from typing import Any, Literal

from neuron_env.cloud.bootstrap import STATUS_TAG

Audience = Literal["cli", "instance", "fleet"]
AUDIENCES: tuple[Audience, ...] = ("cli", "instance")
NEURON_PARAMETERS = "arn:aws:ssm:*::parameter/aws/service/neuron/*"


def iam_policy(audience: Audience) -> dict[str, Any]:
    """The policy document for ``audience``."""
    statements = {
        "cli": _cli_statements,
        "instance": _instance_statements,
        "fleet": _fleet_statements,
    }[audience]()
    return {"Version": "2012-10-17", "Statement": statements}


def _fleet_statements() -> list[dict[str, Any]]:
    """``neuron-env fleet collect``: find instances, run one document on them, read the answers."""
    return [
        {
            "Sid": "FindInstances",
            "Effect": "Allow",
            "Action": ["ec2:DescribeInstances", "ssm:DescribeInstanceInformation"],
            "Resource": "*",  # Describe* calls support no resource-level permissions
        },
        {
            "Sid": "RunNeuronEnvFacts",
            "Effect": "Allow",
            "Action": "ssm:SendCommand",
            "Resource": [
                "arn:aws:ssm:*::document/AWS-RunShellScript",
                "arn:aws:ec2:*:*:instance/*",
            ],
        },
        {
            "Sid": "ReadTheAnswers",
            "Effect": "Allow",
            "Action": "ssm:GetCommandInvocation",
            "Resource": "*",
        },
    ]


def _cli_statements() -> list[dict[str, Any]]:
    return [
        {
            "Sid": "ReadLaunchTemplates",
            "Effect": "Allow",
            "Action": ["ec2:DescribeLaunchTemplates", "ec2:DescribeLaunchTemplateVersions"],
            "Resource": "*",  # Describe* calls support no resource-level permissions
        },
        {
            "Sid": "WriteLaunchTemplates",
            "Effect": "Allow",
            "Action": [
                "ec2:CreateLaunchTemplate",
                "ec2:CreateLaunchTemplateVersion",
                "ec2:ModifyLaunchTemplate",
            ],
            "Resource": "arn:aws:ec2:*:*:launch-template/*",
        },
        {
            "Sid": "ReadNeuronDlamiParameters",
            "Effect": "Allow",
            "Action": ["ssm:GetParameter", "ssm:GetParameters"],
            "Resource": NEURON_PARAMETERS,
        },
    ]


def _instance_statements() -> list[dict[str, Any]]:
    return [
        {
            "Sid": "PublishNeuronEnvStatus",
            "Effect": "Allow",
            "Action": "ec2:CreateTags",
            "Resource": "arn:aws:ec2:*:*:instance/*",
            "Condition": {
                "ForAllValues:StringEquals": {"aws:TagKeys": [STATUS_TAG]},
                "Null": {f"ec2:ResourceTag/{STATUS_TAG}": "false"},
            },
        }
    ]
