"""The one boto3 session of a cloud command, from the standard chain or ``--region/--profile``.

The cloud logic is handed clients made from it (``launch-template``, ``ami``, ``fleet collect``).
"""

from __future__ import annotations

import os
from typing import Any


def aws_session(region: str | None, profile: str | None) -> Any:
    """A boto3 session from the standard chain or --region/--profile; a region is required."""
    import boto3

    from neuron_env.cloud.api_errors import aws_call
    from neuron_env.errors import OperationFailed

    # botocore reads AWS_DEFAULT_REGION and profiles; AWS_REGION is what other SDKs and most
    # CI systems set, so it counts too.
    region = region or os.environ.get("AWS_REGION") or None
    with aws_call("AWS session"):
        session = boto3.session.Session(profile_name=profile, region_name=region)
    if not session.region_name:
        raise OperationFailed(
            "No AWS region is configured.",
            hint="Pass --region, or set AWS_REGION (or a region in your AWS profile).",
        )
    return session
