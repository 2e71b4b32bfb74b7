"""A static PEP 503 index over HTTP on 127.0.0.1, with injectable faults (run as a script).

    python index_server.py ROOT --port-file F --access-log L [--cut NAME]... [--slow NAME]...
        [--stall NAME]... [--error-500 PROJECT]...

``--cut NAME``: announce the whole file, send half of it, close the connection (a download cut
off mid-file). ``--slow NAME``: send the file in 64 KiB pieces every 0.1 s, so that a test can
kill the server or interrupt the client during the download. ``--stall NAME``: send a third of
the file, then nothing more (a download that stalls). ``--error-500 PROJECT``: answer the
project's page with HTTP 500. Every request is appended to the access log before it is answered.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import os
import shutil
import time
import urllib.parse
from pathlib import Path
from typing import Any, BinaryIO


class Handler(http.server.SimpleHTTPRequestHandler):
    cut: frozenset[str] = frozenset()
    slow: frozenset[str] = frozenset()
    stall: frozenset[str] = frozenset()
    error_500: frozenset[str] = frozenset()
    access_log: Path

    def send_head(self) -> Any:
        with self.access_log.open("a") as log:
            log.write(f"{self.command} {self.path}\n")
        if any(f"/simple/{project}/" in self.path for project in self.error_500):
            self.send_error(500, "Internal Server Error")
            return None
        return super().send_head()

    def copyfile(self, source: BinaryIO, outputfile: Any) -> None:
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
    parser.add_argument("--stall", action="append", default=[])
    parser.add_argument("--error-500", action="append", default=[])
    args = parser.parse_args()
    Handler.cut = frozenset(args.cut)
    Handler.slow = frozenset(args.slow)
    Handler.stall = frozenset(args.stall)
    Handler.error_500 = frozenset(args.error_500)
    Handler.access_log = args.access_log
    handler = functools.partial(Handler, directory=str(args.root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    tmp = args.port_file.with_suffix(".tmp")
    tmp.write_text(str(server.server_address[1]))
    tmp.replace(args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
