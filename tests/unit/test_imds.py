"""The IMDSv2 probe against a real HTTP server on 127.0.0.1 that enforces tokens."""

from __future__ import annotations

import time

from neuron_env.probe.imds import IPV6_ENDPOINT, endpoint, probe_ec2
from tests.support.imds import (
    imds_server,
    instance_metadata,
    scripted_endpoint,
    silent_endpoint,
)


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


def _answer(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def test_a_chunked_answer_is_read_whole() -> None:
    chunked = b"4\r\ntrn2\r\n8\r\n.48xlarg\r\n1\r\ne\r\n0\r\n\r\n"
    token = _answer("200 OK", b"tok", "Content-Length: 3")
    answers = [token, _answer("200 OK", chunked, "Transfer-Encoding: chunked")]
    answers += [_answer("404 Not Found", b"", "Content-Length: 0")] * 4
    with scripted_endpoint(answers) as url:
        facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
    assert facts.on_ec2 and facts.instance_type == "trn2.48xlarge"
    assert facts.region is None  # a 404 is no value, not a failure


def test_an_answer_that_is_not_http_means_not_on_ec2() -> None:
    with scripted_endpoint([b"SSH-2.0-OpenSSH_9.6\r\n\r\n"]) as url:
        facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
    assert not facts.on_ec2
    assert "not an HTTP answer" in facts.reason


def test_a_refused_token_is_not_on_ec2_with_the_status() -> None:
    with scripted_endpoint([_answer("403 Forbidden", b"", "Content-Length: 0")]) as url:
        facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
    assert not facts.on_ec2 and "HTTP 403" in facts.reason


def test_an_answer_that_trickles_forever_gives_up_within_the_budget() -> None:
    stalled = _answer("200 OK", b"x" * 100, "Content-Length: 100")
    with scripted_endpoint([stalled], trickle=True) as url:
        started = time.monotonic()
        facts = probe_ec2(timeout=0.5, environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
        waited = time.monotonic() - started
    assert not facts.on_ec2 and "timed out" in facts.reason
    assert waited < 3  # the budget bounds the whole answer, not each byte


def test_an_endless_answer_is_read_no_further_than_the_bound() -> None:
    huge = _answer("200 OK", b"t" * 200_000)  # no Content-Length: until the server closes
    answers = [huge] + [_answer("200 OK", b"v", "Content-Length: 1")] * 5
    with scripted_endpoint(answers) as url:
        facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": url})
    assert facts.on_ec2 and facts.instance_type == "v"


def test_a_403_to_the_token_request_says_instance_metadata_is_turned_off() -> None:
    """AWS answers 403 Forbidden when instance metadata is turned off for the instance (or the
    request is not allowed): that, not "no answer", is what the probe reports."""
    with imds_server({}, forbidden=True) as server:
        facts = probe_ec2(environ={"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint})
    assert not facts.on_ec2
    assert facts.reason.startswith(
        f"IMDS refused the token request with HTTP 403 Forbidden at {server.endpoint}latest/: "
        "instance metadata is turned off for this instance (its HttpEndpoint option)"
    )
