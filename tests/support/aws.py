"""AWS for the tests: moto's server on 127.0.0.1, and the public SSM parameters moto lacks.

moto serves no ``/aws/service/neuron`` parameters and refuses ``put_parameter`` under ``/aws``;
:func:`seed_public_parameter` adds one to moto's backend directly, as reference/aws.md §5
describes (a private attribute: it may need adjusting on a moto upgrade).
"""

from __future__ import annotations

import datetime
import os
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

ACCOUNT = "123456789012"
REGION = "us-east-2"


@dataclass(frozen=True)
class MotoServer:
    endpoint: str

    def env(self) -> dict[str, str]:
        """What a neuron-env subprocess needs to talk to this server and nothing else."""
        return {
            "AWS_ENDPOINT_URL": self.endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_REGION": REGION,
            "AWS_CONFIG_FILE": "/dev/null",
            "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
            "AWS_EC2_METADATA_DISABLED": "true",
        }

    def client(self, service: str):  # type: ignore[no-untyped-def]
        import boto3

        return boto3.client(
            service,
            region_name=REGION,
            endpoint_url=self.endpoint,
            aws_access_key_id="testing",
            aws_secret_access_key="testing",
        )


@contextmanager
def moto_server() -> Iterator[MotoServer]:
    """One moto server on 127.0.0.1 for the whole session (see :func:`reset`), stopped afterwards.

    Starting one takes half a second of wall time; a reset takes milliseconds.
    """
    from moto.server import ThreadedMotoServer

    # Without moto's thousands of public AMIs, which its EC2 backend loads again at every reset
    # (about a second of CPU per test) and lists at every launch: a test that launches an
    # instance registers the one image it needs (:func:`launch_image`). The server runs in this
    # process, so the variable stays set while it runs.
    saved = os.environ.get("MOTO_EC2_LOAD_DEFAULT_AMIS")
    os.environ["MOTO_EC2_LOAD_DEFAULT_AMIS"] = "false"
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    try:
        yield MotoServer(f"http://{host}:{port}")
    finally:
        server.stop()
        if saved is None:
            os.environ.pop("MOTO_EC2_LOAD_DEFAULT_AMIS", None)
        else:
            os.environ["MOTO_EC2_LOAD_DEFAULT_AMIS"] = saved


def launch_image(ec2: Any) -> str:
    """An AMI to launch instances from (the server has none of its own, see :func:`moto_server`)."""
    image: str = ec2.register_image(Name="neuron-dlami", RootDeviceName="/dev/sda1")["ImageId"]
    return image


def reset(server: MotoServer) -> MotoServer:
    """Every resource and seeded parameter gone, as on a fresh server (moto's reset API)."""
    request = urllib.request.Request(f"{server.endpoint}/moto-api/reset", method="POST")
    urllib.request.urlopen(request).close()
    return server


def seed_public_parameter(name: str, value: str, region: str = REGION) -> None:
    """Make the public SSM parameter ``name`` hold ``value`` in moto (an AMI id)."""
    from moto.ssm.models import Parameter, ssm_backends

    backend = ssm_backends[ACCOUNT][region]
    backend._parameters[name].append(
        Parameter(  # type: ignore[abstract]  # moto's own abstract model, built as moto does
            account_id=ACCOUNT,
            name=name,
            value=value,
            parameter_type="String",
            description=None,
            allowed_pattern=None,
            keyid=None,
            last_modified_date=datetime.datetime.now(datetime.timezone.utc),
            version=1,
            data_type="aws:ec2:image",
        )
    )
