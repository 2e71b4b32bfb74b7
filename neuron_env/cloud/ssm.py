"""Resolving a DLAMI's public SSM parameter to an AMI id (``--resolve-ami``)."""

from __future__ import annotations

import re
from typing import Any

from neuron_env.cloud.api_errors import aws_call, cause_code
from neuron_env.cloud.base_image import LIST_DLAMI_PARAMETERS
from neuron_env.errors import OperationFailed

_AMI_ID = re.compile(r"ami-[0-9a-f]{8,17}")


def resolve_image_parameter(ssm: Any, parameter: str, region: str) -> str:
    """The AMI id the public parameter ``parameter`` holds in ``region``; ``ssm`` is a boto3
    SSM client."""
    try:
        with aws_call("ssm:GetParameter"):
            response = ssm.get_parameter(Name=parameter)
    except OperationFailed as exc:
        if cause_code(exc) == "ParameterNotFound":
            raise _not_found(parameter, region) from exc.__cause__
        raise
    value = str(response["Parameter"]["Value"])
    if not _AMI_ID.fullmatch(value):
        raise OperationFailed(
            f"The SSM parameter {parameter} holds '{value}', which is not an AMI id.",
            hint="Check the parameter, or pass the AMI with --ami.",
        )
    return value


def _not_found(parameter: str, region: str) -> OperationFailed:
    return OperationFailed(
        f"The SSM parameter {parameter} does not exist in {region}: either Neuron publishes no "
        "such DLAMI there, or the parameter's name is not what the matrix expects.",
        hint=f"List the published ones: {LIST_DLAMI_PARAMETERS} --region {region}; then pass "
        "the AMI with --ami, or a newer matrix with --matrix-dir.",
    )
