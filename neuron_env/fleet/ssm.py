"""AWS Systems Manager Run Command as the fleet's execution engine: a thin gateway over boto3.

The gateway is the only code that talks to AWS for the fleet; clients are passed in. Tests
subclass it for the paths moto does not implement (``describe_instance_information``, scripted
command output), and use moto for the rest.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from botocore.exceptions import ClientError

from neuron_env.cloud.api_errors import aws_call, error_code, translate_client_error
from neuron_env.frozen import frozen

DOCUMENT = "AWS-RunShellScript"
BATCH = 50  # send_command accepts at most 50 instance ids per call
POLICY = ("fleet", "policy")
TERMINAL = {"Success", "Failed", "Cancelled", "TimedOut", "Undeliverable", "Terminated"}
THROTTLED = {
    "ThrottlingException",
    "Throttling",
    "TooManyRequestsException",
    "RequestLimitExceeded",
}


@frozen
class Invocation:
    """One instance's answer to one command; ``status`` is SSM's (``InProgress``, ``Success``)."""

    status: str
    exit_code: int = -1
    stdout: str = ""
    stderr: str = ""

    @property
    def finished(self) -> bool:
        return self.status in TERMINAL


class Throttled(Exception):
    """AWS asked us to slow down; the caller backs off and asks again."""


class SsmGateway:
    """EC2 for finding instances, SSM for running a shell script on them and reading the result."""

    def __init__(self, ec2: Any, ssm: Any) -> None:
        self.ec2 = ec2
        self.ssm = ssm

    def instances(self, tags: Sequence[tuple[str, Sequence[str]]], ids: Sequence[str]) -> list[str]:
        """Running instances with all the given tags (``tag:Key=Value``) and/or the given ids."""
        filters = [{"Name": f"tag:{key}", "Values": list(values)} for key, values in tags]
        filters.append({"Name": "instance-state-name", "Values": ["running"]})
        kwargs: dict[str, Any] = {"Filters": filters}
        if ids:
            kwargs["InstanceIds"] = list(ids)
        found: list[str] = []
        with aws_call("ec2:DescribeInstances", POLICY):
            for page in self.ec2.get_paginator("describe_instances").paginate(**kwargs):
                found += [i["InstanceId"] for r in page["Reservations"] for i in r["Instances"]]
        return sorted(set(found))

    def managed(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` are online in Systems Manager (have a running, registered agent)."""
        online: set[str] = set()
        for batch in batches(ids):
            with aws_call("ssm:DescribeInstanceInformation", POLICY):
                pages = self.ssm.get_paginator("describe_instance_information").paginate(
                    Filters=[{"Key": "InstanceIds", "Values": batch}]
                )
                for page in pages:
                    online |= {
                        i["InstanceId"]
                        for i in page["InstanceInformationList"]
                        if i.get("PingStatus") == "Online"
                    }
        return online

    def send(self, ids: Sequence[str], script: Sequence[str], *, timeout: int, concurrency: str,
             max_errors: str) -> str:  # fmt: skip
        """Run ``script`` on ``ids`` (at most 50); returns the command id."""
        with aws_call("ssm:SendCommand", POLICY):
            response = self.ssm.send_command(
                InstanceIds=list(ids),
                DocumentName=DOCUMENT,
                Comment="neuron-env fleet collect",
                Parameters={"commands": list(script), "executionTimeout": [str(timeout)]},
                TimeoutSeconds=max(30, timeout),
                MaxConcurrency=concurrency,
                MaxErrors=max_errors,
            )
        return str(response["Command"]["CommandId"])

    def invocation(self, command_id: str, instance_id: str) -> Invocation:
        """The instance's answer so far; ``Pending`` while SSM has not registered it yet."""
        try:
            answer = self.ssm.get_command_invocation(CommandId=command_id, InstanceId=instance_id)
        except ClientError as exc:
            code = error_code(exc)
            if code == "InvocationDoesNotExist":
                return Invocation("Pending")
            if code in THROTTLED:
                raise Throttled(code) from exc
            raise translate_client_error(exc, "ssm:GetCommandInvocation", POLICY) from exc
        return Invocation(
            status=str(answer.get("Status", "Pending")),
            exit_code=int(answer.get("ResponseCode", -1)),
            stdout=str(answer.get("StandardOutputContent", "")),
            stderr=str(answer.get("StandardErrorContent", "")),
        )


def batches(ids: Iterable[str]) -> Iterable[list[str]]:
    items = list(ids)
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]
