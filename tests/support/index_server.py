"""A static PEP 503 index over HTTP on 127.0.0.1, with injectable faults (run as a script).

    python index_server.py ROOT --port-file F --access-log L [--cut NAME]... [--slow NAME]...
        [--pep691] [--status CODE] [--auth USER:PASSWORD] [--tls CERT KEY]
        [--stall NAME]... [--error-500 PROJECT]... [--hold FRAGMENT]...

``--cut NAME``: announce the whole file, send half of it, close the connection (a download cut
off mid-file). ``--slow NAME``: send the file in 64 KiB pieces every 0.1 s, so that a test can
kill the server or interrupt the client during the download. ``--stall NAME``: send a third of
the file, then nothing more (a download that stalls). ``--error-500 PROJECT``: answer the
project's page with HTTP 500. ``--hold FRAGMENT``: a request whose path contains FRAGMENT is
never answered; it is held until the client goes away (so that a test can signal the client while
it waits, then see that its connection was closed). Every request is appended to the access log
before it is answered.

``--pep691``: answer a directory with its ``index.json`` (as
``application/vnd.pypi.simple.v1+json``) when the request's Accept header asks for PEP 691 JSON.
``--status CODE``: answer every request with that HTTP status. ``--auth``: demand HTTP basic
credentials. ``--tls``: serve HTTPS.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import os
import select
import shutil
import socket
import ssl
import time
import urllib.parse
from pathlib import Path
from typing import Any


class Handler(http.server.SimpleHTTPRequestHandler):
    cut: frozenset[str] = frozenset()
    slow: frozenset[str] = frozenset()
    stall: frozenset[str] = frozenset()
    error_500: frozenset[str] = frozenset()
    hold: frozenset[str] = frozenset()
    access_log: Path
    pep691 = False
    status: int | None = None
    auth: str | None = None

    def send_head(self) -> Any:
        with self.access_log.open("a") as log:
            log.write(f"{self.command} {self.path} {self.headers.get('Authorization', '-')}\n")
        if any(fragment in self.path for fragment in self.hold):
            self._hold_until_the_client_leaves()
            return None
        if any(f"/simple/{project}/" in self.path for project in self.error_500):
            self.send_error(500, "Internal Server Error")
            return None
        if self.status is not None:
            self.send_error(self.status)
            return None
        if self.auth and self.headers.get("Authorization") != self.auth:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="index"')
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        if self.pep691 and "vnd.pypi.simple.v1+json" in self.headers.get("Accept", ""):
            page = Path(self.translate_path(self.path), "index.json")
            if self.path.endswith("/") and page.is_file():
                data = page.open("rb")
                self.send_response(200)
                self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
                self.send_header("Content-Length", str(page.stat().st_size))
                self.end_headers()
                return data
        return super().send_head()

    def _hold_until_the_client_leaves(self, limit: float = 600) -> None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            if select.select([self.connection], [], [], 1)[0]:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        break  # closed by the client
                except OSError:
                    break
        self.close_connection = True

    def copyfile(self, source: Any, outputfile: Any) -> None:
        name = os.path.basename(urllib.parse.unquote(self.path.split("?")[0]))
        if name in self.cut:
            data = source.read()
            outputfile.write(data[: len(data) // 2])
            outputfile.flush()
            self.close_connection = True
            return
        if name in self.stall:
            data = source.read()
            outputfile.write(data[: len(data) // 3])
            outputfile.flush()
            time.sleep(600)
            return
        if name in self.slow:
            while chunk := source.read(64 * 1024):
                outputfile.write(chunk)
                outputfile.flush()
                time.sleep(0.1)
            return
        shutil.copyfileobj(source, outputfile)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("--port-file", type=Path, required=True)
    parser.add_argument("--access-log", type=Path, required=True)
    parser.add_argument("--cut", action="append", default=[])
    parser.add_argument("--slow", action="append", default=[])
    parser.add_argument("--pep691", action="store_true")
    parser.add_argument("--status", type=int)
    parser.add_argument("--auth", metavar="USER:PASSWORD")
    parser.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    parser.add_argument("--stall", action="append", default=[])
    parser.add_argument("--error-500", action="append", default=[])
    parser.add_argument("--hold", action="append", default=[])
    args = parser.parse_args()
    Handler.cut = frozenset(args.cut)
    Handler.slow = frozenset(args.slow)
    Handler.stall = frozenset(args.stall)
    Handler.error_500 = frozenset(args.error_500)
    Handler.hold = frozenset(args.hold)
    Handler.access_log = args.access_log
    Handler.pep691 = args.pep691
    Handler.status = args.status
    if args.auth:
        Handler.auth = "Basic " + base64.b64encode(args.auth.encode()).decode()
    handler = functools.partial(Handler, directory=str(args.root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    if args.tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*args.tls)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.replace(args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
