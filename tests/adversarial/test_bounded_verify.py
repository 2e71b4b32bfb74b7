"""``matrix verify`` against hostile index servers: every page is read within bounds.

A real HTTP server on 127.0.0.1 (in this process, one thread per connection) answers each
request by the first part of its path: a page generated on the fly, gigabytes long and without a
Content-Length; a page that trickles one byte at a time, in its headers or in its body; PEP 691
JSON nested 100,000 levels deep; wheel file names with tags no real wheel has. neuron-env runs as
a subprocess under an address-space limit, so a page held whole in memory fails the test
instead of the machine, and under a subprocess timeout, so a read that outlives ``--timeout``
fails it too.

Reading an index that answers such a page is an index that cannot be read: exit 1, the index
named with the reason, as the ``matrix verify`` row of docs/commands/matrix.md says; never a
traceback.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import resource
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import tomllib
from packaging.utils import canonicalize_name

from tests.support.cli import Result, cli_argv
from tests.support.page_indexes import SCENARIOS, wheel_names

pytestmark = pytest.mark.integration

GiB = 1 << 30
ADDRESS_SPACE = 1 * GiB  # neuron-env reading a 64 MiB page fits; a 3 GiB page held whole does not
HUGE_PAGE = 3 * GiB
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
ODD_WHEELS = [  # tags pip installs on no host: each one raised ValueError in the tag parsing
    "torch-2.14.0-cp3x-cp3x-manylinux_2_35_x86_64.whl",
    "torch-2.14.0-cp3-cp3-manylinux_2_35_x86_64.whl",
    "torch-2.14.0-cp3_12-cp312-manylinux_2_35_x86_64.whl",
    f"torch-2.14.0-cp3{'9' * 5000}-abi3-manylinux_2_35_x86_64.whl",
    f"torch-2.14.0-cp312-cp312-manylinux_{'9' * 5000}_1_x86_64.whl",
    f"torch-{'9' * 5000}-cp312-cp312-manylinux_2_35_x86_64.whl",
    f"torch-{'9' * 5000}.tar.gz",
]


def _agreeing_pages() -> dict[str, str]:
    """``neuron/<project>`` → an HTML page, from the scenario that agrees with 2.34.0."""
    doc = tomllib.loads((SCENARIOS / "agree.toml").read_text())
    pages: dict[str, list[str]] = {}
    for index in ("neuron", "pytorch"):
        for entry in doc[index]:
            key = f"{index}/{canonicalize_name(str(entry['name']))}"
            pages.setdefault(key, []).extend(wheel_names(entry))
    pages["pytorch/torch"] += ODD_WHEELS
    return {key: "".join(f'<a href="{n}">{n}</a>\n' for n in names) for key, names in pages.items()}


class Hostile(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"  # no Content-Length needed: the body ends when we close
    stop: threading.Event
    pages: dict[str, str]

    def do_GET(self) -> None:
        mode, _, rest = self.path.strip("/").partition("/")
        # neuron-env stops reading these pages, which is what they are for.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            getattr(self, f"_{mode.replace('-', '_')}")(rest)

    def log_message(self, *args: object) -> None:
        pass

    def _head(self, content_type: str = "text/html") -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.end_headers()

    def _huge(self, _: str) -> None:
        self._head()
        line = b'<a href="torch-2.14.0-cp312-cp312-manylinux_2_35_x86_64.whl">torch</a>\n'
        chunk = line * ((1 << 20) // len(line))
        for _chunk in range(HUGE_PAGE // len(chunk)):  # generated as it is sent: never held here
            if self.stop.is_set():
                return
            self.wfile.write(chunk)

    def _trickle_body(self, _: str) -> None:
        self._head()
        self._trickle(b"<a href='x'>" * 10_000)

    def _trickle_headers(self, _: str) -> None:
        self._trickle(b"HTTP/1.0 200 OK\r\nX-Slow: " + b"a" * 100_000)

    def _trickle(self, data: bytes) -> None:
        for byte in data:
            self.wfile.write(bytes([byte]))
            self.wfile.flush()
            if self.stop.wait(0.1):
                return

    def _nested(self, _: str) -> None:
        self._head(JSON_TYPE)
        depth = 100_000
        self.wfile.write(b'{"files": ' + b"[" * depth + b"]" * depth + b"}")

    def _odd(self, rest: str) -> None:
        index, _, project = rest.replace("/simple", "").strip("/").partition("/")
        page = self.pages.get(f"{index}/{project}")
        if page is None:
            self.send_error(404)
            return
        self._head()
        self.wfile.write(page.encode())


@pytest.fixture(scope="module")
def hostile() -> Iterator[str]:
    stop = threading.Event()
    handler = type("Handler", (Hostile,), {"stop": stop, "pages": _agreeing_pages()})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    stop.set()
    server.shutdown()
    server.server_close()


def _bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def verify(tmp_path: Path, neuron: str, pytorch: str, *flags: str) -> Result:
    """``matrix verify`` with a bounded address space; TimeoutExpired fails the test."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NEURON_ENV_")}
    # Few malloc arenas: each thread's arena reserves 64 MiB of address space it never uses.
    env |= {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": "", "MALLOC_ARENA_MAX": "2"}
    argv = cli_argv("matrix", "verify", "--release", "2.34.0", *flags)
    argv += ["--neuron-index", neuron, "--pytorch-index", pytorch]
    proc = subprocess.run(
        argv,
        capture_output=True,
        text=True,
        env=env | {"NO_COLOR": "1", "COLUMNS": "200"},
        cwd=tmp_path,
        timeout=60,
        preexec_fn=_bounded_memory,
        check=False,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def test_a_page_of_gigabytes_is_refused_at_its_cap_in_bounded_memory(
    tmp_path: Path, hostile: str
) -> None:
    result = verify(tmp_path, f"{hostile}/huge/simple", f"{hostile}/huge/simple")
    assert result.returncode == 1, result.stderr
    assert "the page is too large: more than 64.0 MiB" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("where", ["body", "headers"])
def test_a_page_sent_a_byte_at_a_time_ends_at_the_whole_request_timeout(
    tmp_path: Path, hostile: str, where: str
) -> None:
    slow = f"{hostile}/trickle-{where}/simple"
    result = verify(tmp_path, slow, slow, "--timeout", "2")  # pages of 10+ s without the fix
    assert result.returncode == 1, result.stderr
    assert "no answer within 2 s (a whole answer, not a first byte)" in result.stderr
    assert "Traceback" not in result.stderr


def test_json_nested_100000_levels_deep_is_an_unreadable_index_not_a_traceback(
    tmp_path: Path, hostile: str
) -> None:
    nested = f"{hostile}/nested/simple"
    result = verify(tmp_path, nested, nested, "--json")
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    indexes = json.loads(result.stdout)["indexes"]
    reasons = {ix["reason"] for ix in indexes}
    assert reasons == {"not a simple index page (invalid JSON: nested more than 64 levels deep)"}


def test_wheels_with_odd_tags_are_left_out_and_the_rest_is_judged(
    tmp_path: Path, hostile: str
) -> None:
    result = verify(tmp_path, f"{hostile}/odd/neuron/simple", f"{hostile}/odd/pytorch/simple")
    assert "Traceback" not in result.stderr
    assert result.returncode == 0, result.stderr
    assert "✓ torch 2.14.0 is on the" in result.stdout
    assert "0 contradicted" in result.stdout
