"""A real IMDSv2 endpoint on 127.0.0.1 that enforces tokens, and one that never answers."""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOKEN_PATH = "/latest/api/token"
TTL_HEADER = "X-aws-ec2-metadata-token-ttl-seconds"
TOKEN_HEADER = "X-aws-ec2-metadata-token"


def instance_metadata(instance_type: str, region: str = "us-east-2") -> dict[str, str]:
    return {
        "instance-type": instance_type,
        "instance-id": "i-0123456789abcdef0",
        "ami-id": "ami-0fedcba9876543210",
        "placement/region": region,
        "placement/availability-zone": f"{region}a",
    }


class _Handler(BaseHTTPRequestHandler):
    server: _ImdsServer

    def do_PUT(self) -> None:
        if self.server.forbidden:  # instance metadata turned off (HttpEndpoint disabled)
            self._reply(403, "")
            return
        if self.path != TOKEN_PATH or not self.headers.get(TTL_HEADER):
            self._reply(400, "missing token TTL")
            return
        token = secrets.token_hex(16)
        self.server.tokens.add(token)
        self._reply(200, token)

    def do_GET(self) -> None:
        if self.headers.get(TOKEN_HEADER) not in self.server.tokens:
            self.server.unauthorized += 1
            self._reply(401, "")
            return
        value = self.server.metadata.get(self.path.removeprefix("/latest/meta-data/"))
        self._reply(200, value) if value is not None else self._reply(404, "")

    def _reply(self, code: int, body: str) -> None:
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


class _ImdsServer(ThreadingHTTPServer):
    def __init__(self, metadata: dict[str, str], *, forbidden: bool = False) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.metadata = metadata
        self.forbidden = forbidden
        self.tokens: set[str] = set()
        self.unauthorized = 0

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/"


@contextmanager
def imds_server(metadata: dict[str, str], *, forbidden: bool = False) -> Iterator[_ImdsServer]:
    """``forbidden``: every token request is answered 403 Forbidden, as IMDS answers when
    instance metadata is turned off for the instance (AWS's troubleshooting page for instance
    metadata, "403 - Forbidden")."""
    server = _ImdsServer(metadata, forbidden=forbidden)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def silent_endpoint() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) but never answers a request."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        sock.close()


@contextmanager
def scripted_endpoint(answers: list[bytes], *, trickle: bool = False) -> Iterator[str]:
    """A server that answers its n-th connection with ``answers[n]`` (raw bytes), then closes.

    ``trickle``: it sends one byte at a time and never finishes (a stalled IMDS).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    stop = threading.Event()

    def serve() -> None:
        for answer in answers:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn, contextlib.suppress(OSError):  # the client may hang up first
                conn.recv(65536)
                if not trickle:
                    conn.sendall(answer)
                    continue
                for byte in answer:
                    if stop.wait(0.05):  # the drip's pace, not a wait for something to happen
                        return
                    conn.sendall(bytes([byte]))
                stop.wait()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/"
    finally:
        stop.set()
        sock.close()
