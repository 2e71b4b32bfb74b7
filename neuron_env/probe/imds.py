"""EC2 identity through the instance metadata service, IMDSv2 only (token PUT, then GETs).

Honours the standard variables ``AWS_EC2_METADATA_DISABLED``, ``AWS_EC2_METADATA_SERVICE_ENDPOINT``
and ``AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE``. Off EC2 the token request fails or times out within
``timeout`` seconds and the answer is "not on EC2", never an exception.
"""

from __future__ import annotations

import http.client
import os
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

from neuron_env.facts import Ec2Facts

DEFAULT_ENDPOINT = "http://169.254.169.254/"
IPV6_ENDPOINT = "http://[fd00:ec2::254]/"
TOKEN_TTL_SECONDS = "60"  # noqa: S105 - a lifetime, not a secret
FIELDS = {
    "instance_type": "meta-data/instance-type",
    "instance_id": "meta-data/instance-id",
    "ami_id": "meta-data/ami-id",
    "region": "meta-data/placement/region",
    "availability_zone": "meta-data/placement/availability-zone",
}


class ImdsError(OSError):
    """IMDS answered with something other than 200 OK."""


def endpoint(environ: Mapping[str, str] | None = None) -> str:
    env = os.environ if environ is None else environ
    configured = env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT", "").strip()
    if configured:
        return configured if configured.endswith("/") else configured + "/"
    if env.get("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "").lower() == "ipv6":
        return IPV6_ENDPOINT
    return DEFAULT_ENDPOINT


def probe_ec2(timeout: float = 1.0, environ: Mapping[str, str] | None = None) -> Ec2Facts:
    """Ask IMDSv2 who this instance is; every request shares one ``timeout`` budget."""
    env = os.environ if environ is None else environ
    if env.get("AWS_EC2_METADATA_DISABLED", "").lower() == "true":
        return Ec2Facts(on_ec2=False, reason="IMDS is disabled by AWS_EC2_METADATA_DISABLED=true")
    base = endpoint(env) + "latest/"
    deadline = time.monotonic() + timeout
    try:
        token = _request(
            "PUT",
            base + "api/token",
            deadline,
            {"X-aws-ec2-metadata-token-ttl-seconds": TOKEN_TTL_SECONDS},
        )
    except (OSError, http.client.HTTPException) as exc:
        return Ec2Facts(on_ec2=False, reason=f"no IMDSv2 answer from {base}: {_why(exc)}")
    values = {name: _get(base + path, deadline, token) for name, path in FIELDS.items()}
    return Ec2Facts(
        on_ec2=True,
        instance_type=values["instance_type"],
        instance_id=values["instance_id"],
        ami_id=values["ami_id"],
        region=values["region"],
        availability_zone=values["availability_zone"],
    )


def _get(url: str, deadline: float, token: str) -> str | None:
    try:
        return _request("GET", url, deadline, {"X-aws-ec2-metadata-token": token})
    except (OSError, http.client.HTTPException):
        return None


def _request(method: str, url: str, deadline: float, headers: dict[str, str]) -> str:
    """One HTTP request straight to IMDS (never through the user's proxy settings)."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("timed out")
    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=remaining)
    try:
        connection.request(method, parts.path, headers=headers)
        response = connection.getresponse()
        body = response.read(4096)
    finally:
        connection.close()
    if response.status != 200:
        raise ImdsError(f"HTTP {response.status}")
    return body.decode("utf-8", errors="replace").strip()


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
