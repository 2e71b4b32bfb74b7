"""The IMDSv2 probe against a real HTTP server on 127.0.0.1 that enforces tokens."""

from __future__ import annotations

import time

from neuron_env.probe.imds import IPV6_ENDPOINT, endpoint, probe_ec2
from tests.support.imds import imds_server, instance_metadata, silent_endpoint


def test_token_then_metadata_with_the_token_on_every_request() -> None:
    with imds_server(instance_metadata("trn2.48xlarge", region="sa-east-1")) as server:
        facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint})
    assert facts.on_ec2
    assert facts.instance_type == "trn2.48xlarge"
    assert facts.region == "sa-east-1" and facts.availability_zone == "sa-east-1a"
    assert facts.instance_id == "i-0123456789abcdef0"
    assert server.unauthorized == 0  # never asked without a token
    assert len(server.tokens) == 1  # one token for all requests


def test_an_endpoint_that_never_answers_gives_up_within_the_budget() -> None:
    with silent_endpoint() as url:
        started = time.monotonic()
        facts = probe_ec2(timeout=0.5, environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
        waited = time.monotonic() - started
    assert not facts.on_ec2
    assert "no IMDSv2 answer" in facts.reason
    assert waited < 5  # it gave up instead of hanging (the budget was 0.5 s)


def test_disabled_by_the_standard_variable() -> None:
    facts = probe_ec2(environ={"AWS_EC2_METADATA_DISABLED": "true"})
    assert not facts.on_ec2 and "AWS_EC2_METADATA_DISABLED" in facts.reason


def test_nothing_listening_means_not_on_ec2() -> None:
    with silent_endpoint() as url:
        pass  # closed again: connections are refused now
    facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
    assert not facts.on_ec2


def test_endpoint_selection_follows_the_aws_variables() -> None:
    assert endpoint({}) == "http://169.254.169.254/"
    assert endpoint({"AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE": "IPv6"}) == IPV6_ENDPOINT
    assert (
        endpoint({"AWS_EC2_METADATA_SERVICE_ENDPOINT": "http://10.0.0.1:81"})
        == "http://10.0.0.1:81/"
    )
