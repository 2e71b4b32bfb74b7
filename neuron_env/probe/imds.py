"""EC2 identity through the instance metadata service, IMDSv2 only (token PUT, then GETs).

Honours the standard variables ``AWS_EC2_METADATA_DISABLED``, ``AWS_EC2_METADATA_SERVICE_ENDPOINT``
and ``AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE``. Off EC2 the token request fails or times out within
``timeout`` seconds and the answer is "not on EC2", never an exception.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

from neuron_env.facts import IMDS_FORBIDDEN, Ec2Facts

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
    """IMDS answered with something other than 200 OK (``status``: its HTTP status, if any)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


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
    unusable = _unusable_endpoint(base)
    if unusable:
        return Ec2Facts(on_ec2=False, reason=unusable)
    deadline = time.monotonic() + timeout
    try:
        token = _request(
            "PUT",
            base + "api/token",
            deadline,
            {"X-aws-ec2-metadata-token-ttl-seconds": TOKEN_TTL_SECONDS},
        )
    except ImdsError as exc:
        return Ec2Facts(on_ec2=False, reason=_refused(base, exc))
    except OSError as exc:
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


def _unusable_endpoint(url: str) -> str | None:
    """Why the endpoint (AWS_EC2_METADATA_SERVICE_ENDPOINT) cannot be asked, before any use:
    a port past 65535 or a scheme other than http."""
    parts = urlsplit(url)
    try:
        parts.port  # noqa: B018 - urllib checks the port's range when it is read
    except ValueError:
        port = parts.netloc.rpartition(":")[2][:20]
        return f"AWS_EC2_METADATA_SERVICE_ENDPOINT names port {port}, outside 1-65535"
    if parts.scheme != "http" or not parts.hostname:
        return f"AWS_EC2_METADATA_SERVICE_ENDPOINT {url[:100]!r} is not an http:// address"
    return None


def _get(url: str, deadline: float, token: str) -> str | None:
    try:
        return _request("GET", url, deadline, {"X-aws-ec2-metadata-token": token})
    except OSError:
        return None


def _request(method: str, url: str, deadline: float, headers: dict[str, str]) -> str:
    """One HTTP/1.1 request straight to IMDS (never through the user's proxy settings).

    A few lines over a socket rather than http.client, whose import (email, ssl) is a tenth of
    doctor's start-up; every read keeps to ``deadline``, and at most :data:`MAX_ANSWER` bytes are
    read.
    """
    parts = urlsplit(url)
    host, port = parts.hostname or "", parts.port or 80
    authority = f"[{host}]" if ":" in host else host
    lines = [
        f"{method} {parts.path or '/'} HTTP/1.1",
        f"Host: {authority}" + (f":{parts.port}" if parts.port else ""),
        "Accept-Encoding: identity",
        "Connection: close",
        *(f"{name}: {value}" for name, value in headers.items()),
        *(["Content-Length: 0"] if method == "PUT" else []),
    ]
    address = (_address(host), port)  # getaddrinfo takes bytes; typeshed says str only
    with socket.create_connection(address, timeout=_left(deadline)) as sock:  # type: ignore[arg-type]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        answer = _read_answer(sock, deadline)
    status, body = _parse_answer(answer)
    if status != 200:
        raise ImdsError(f"HTTP {status}", status)
    return body[:4096].decode("utf-8", errors="replace").strip()


MAX_ANSWER = 64 * 1024


def _address(host: str) -> str | bytes:
    """``host`` as getaddrinfo takes it: an ASCII name or address as bytes, since a str makes it
    import the IDNA codec (a hundredth of doctor's start-up) to encode even ``169.254.169.254``."""
    try:
        return host.encode("ascii")
    except UnicodeEncodeError:
        return host


def _left(deadline: float) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise TimeoutError("timed out")
    return remaining


def _read_answer(sock: socket.socket, deadline: float) -> bytes:
    """The answer up to its end (Content-Length, or the server closing), within ``deadline``."""
    data = b""
    while len(data) < MAX_ANSWER:
        sock.settimeout(_left(deadline))
        chunk = sock.recv(MAX_ANSWER - len(data))
        if not chunk:
            break
        data += chunk
        head, found, body = data.partition(b"\r\n\r\n")
        length = _content_length(head) if found else None
        if length is not None and len(body) >= length:
            break
    return data


def _content_length(head: bytes) -> int | None:
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length" and value.strip().isdigit():
            return int(value.strip())
    return None


def _parse_answer(answer: bytes) -> tuple[int, bytes]:
    """The status code and body of an HTTP/1.x answer; anything else is an :class:`ImdsError`."""
    head, found, body = answer.partition(b"\r\n\r\n")
    status_line = head.split(b"\r\n", 1)[0].split()
    if not found or len(status_line) < 2 or not status_line[0].startswith(b"HTTP/1."):
        raise ImdsError("not an HTTP answer")
    if not status_line[1].isdigit():
        raise ImdsError("not an HTTP answer")
    length = _content_length(head)
    if length is not None:
        body = body[:length]
    elif b"transfer-encoding: chunked" in head.lower():
        body = _dechunk(body)
    return int(status_line[1]), body


def _dechunk(body: bytes) -> bytes:
    out = b""
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        try:
            size = int(size_line.split(b";")[0].strip() or b"0", 16)
        except ValueError:
            raise ImdsError("a malformed chunked answer") from None
        if size == 0:
            break
        out, body = out + rest[:size], rest[size + 2 :]
    return out


def _refused(base: str, exc: ImdsError) -> str:
    """What a refusal of the token request means. 403: instance metadata is turned off for the
    instance (its HttpEndpoint option), or the request is not allowed (AWS's troubleshooting
    page for instance metadata, "403 - Forbidden")."""
    if exc.status == 403:
        return (
            f"{IMDS_FORBIDDEN} at {base}: instance metadata is turned off for this instance "
            "(its HttpEndpoint option), or the request is not allowed here"
        )
    return f"no IMDSv2 answer from {base}: {_why(exc)}"


def _why(exc: BaseException) -> str:
    return str(exc) or type(exc).__name__
