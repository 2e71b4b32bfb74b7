"""Reading HTTP bodies that someone else serves, bounded like files (see :mod:`input_files`).

A socket timeout bounds each read, not the request: a server that sends one byte a second never
trips it. Here one deadline bounds the whole request (name lookup, connect, TLS, redirects,
headers and body): the request runs in a daemon thread, the caller waits at most until the
deadline, then cuts the connection and raises :class:`DeadlinePassed`. A body is refused past
``max_bytes`` (a ``Content-Length`` past it before any byte of the body is read), so memory stays
bounded whatever the server sends. A command that makes many requests passes one
:class:`Deadline` for all of them as well.

Errors are those of ``urllib`` (``HTTPError`` for a status >= 400, ``URLError``/``OSError`` for
the network), plus :class:`DeadlinePassed` (a ``TimeoutError``) and :class:`BodyTooLarge`.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
import urllib.request
from typing import Any

from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, size_text
from neuron_env.signals import wait_for_event

_CHUNK = 1 << 16


@frozen
class Deadline:
    """A point in time (``time.monotonic``) after which no more is read."""

    at: float

    @classmethod
    def after(cls, seconds: float) -> Deadline:
        return cls(time.monotonic() + seconds)

    def left(self) -> float:
        return max(0.0, self.at - time.monotonic())

    def sooner(self, other: Deadline | None) -> Deadline:
        return self if other is None or self.at <= other.at else other


class DeadlinePassed(TimeoutError):
    """The whole request (or the command's reading) did not finish in time."""

    def __init__(self, timeout: float, whole_command: bool) -> None:
        if whole_command:
            text = "the time the whole command may spend reading ran out before a complete answer"
        else:
            text = f"no answer within {timeout:g} s (a whole answer, not a first byte)"
        super().__init__(text)
        self.whole_command = whole_command


class BodyTooLarge(InputRejected):
    """The server sent (or announced) more than the caller reads."""


@frozen
class HttpAnswer:
    status: int
    content_type: str
    body: bytes


def fetch(
    request: urllib.request.Request | str,
    *,
    timeout: float,
    max_bytes: int,
    deadline: Deadline | None = None,
    context: ssl.SSLContext | None = None,
) -> HttpAnswer:
    """GET ``request``: the whole answer within ``timeout`` seconds (and before ``deadline``),
    at most ``max_bytes`` of body (0: the status only, the body is not read)."""
    own = Deadline.after(timeout)
    ends = own.sooner(deadline)
    if not ends.left():  # the command's time is up: no new connection is even tried
        raise DeadlinePassed(timeout, whole_command=True)
    exchange = _Exchange(request, max_bytes, ends, context)
    worker = threading.Thread(target=exchange.run, name="neuron-env-http", daemon=True)
    worker.start()
    if not wait_for_event(exchange.done, ends.left()):
        exchange.cut()
        raise DeadlinePassed(timeout, whole_command=ends is not own) from None
    return exchange.answer()


class _Exchange:
    """One request, run in a worker thread; :meth:`cut` ends it from the caller's thread."""

    def __init__(
        self,
        request: urllib.request.Request | str,
        max_bytes: int,
        ends: Deadline,
        context: ssl.SSLContext | None,
    ) -> None:
        self.request, self.max_bytes, self.ends, self.context = request, max_bytes, ends, context
        self.done = threading.Event()
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._result: HttpAnswer | None = None
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            self._result = self._get()
        except BaseException as exc:  # handed to the caller's thread by answer()
            self._error = exc
        finally:
            self.done.set()

    def answer(self) -> HttpAnswer:
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def _get(self) -> HttpAnswer:
        opener = urllib.request.build_opener(
            _WatchedHTTPHandler(self), _WatchedHTTPSHandler(self, self.context)
        )
        with opener.open(self.request, timeout=max(self.ends.left(), 0.001)) as response:
            content_type = response.headers.get_content_type()
            body = _read_capped(response, self.max_bytes) if self.max_bytes else b""
            return HttpAnswer(response.status, content_type, body)

    def connect(self, address: Any, timeout: Any = None, source: Any = None) -> socket.socket:
        sock = socket.create_connection(address, timeout, source)
        with self._lock:
            self._sockets.append(sock)
        return sock

    def cut(self) -> None:
        """Wake the worker out of any blocking read: its sockets are shut down."""
        with self._lock:
            for sock in self._sockets:
                with contextlib.suppress(OSError):  # already closed
                    sock.shutdown(socket.SHUT_RDWR)


def _read_capped(response: http.client.HTTPResponse, max_bytes: int) -> bytes:
    announced = response.headers.get("Content-Length", "")
    if (
        announced.isascii()
        and announced.isdigit()
        and (len(announced) > 18 or int(announced) > max_bytes)
    ):
        raise BodyTooLarge(f"{announced[:20]} bytes announced, more than {size_text(max_bytes)}")
    chunks, size = [], 0
    while chunk := response.read1(_CHUNK):
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise BodyTooLarge(f"more than {size_text(max_bytes)}")
    return b"".join(chunks)


class _WatchedHTTPHandler(urllib.request.HTTPHandler):
    def __init__(self, exchange: _Exchange) -> None:
        super().__init__()
        self.exchange = exchange

    def http_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        return self.do_open(_watched(http.client.HTTPConnection, self.exchange), req)


class _WatchedHTTPSHandler(urllib.request.HTTPSHandler):
    def __init__(self, exchange: _Exchange, context: ssl.SSLContext | None) -> None:
        super().__init__(context=context)
        self.exchange = exchange

    def https_open(self, req: urllib.request.Request) -> http.client.HTTPResponse:
        connection = _watched(http.client.HTTPSConnection, self.exchange)
        return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]


def _watched(base: type[http.client.HTTPConnection], exchange: _Exchange) -> Any:
    """A connection class whose sockets the exchange can shut down (http.client opens them
    through ``_create_connection``, TLS included: it wraps the socket opened there)."""

    def connection(*args: Any, **kwargs: Any) -> http.client.HTTPConnection:
        made = base(*args, **kwargs)
        made._create_connection = exchange.connect  # type: ignore[attr-defined]
        return made

    return connection
