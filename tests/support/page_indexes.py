"""Static "simple" index pages on 127.0.0.1 for the `matrix verify` tests (and adversarial ones).

The pages are written from ``tests/data/verify/*.toml``: a page needs only the wheels' file names
and hashes, so no wheel is built. ``index_server.py`` serves them, answering PEP 691 JSON when
started with ``--pep691`` and asked for it, PEP 503 HTML otherwise.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from tests.support.cli import DATA

SCENARIOS = DATA / "verify"
SERVER = str(Path(__file__).with_name("index_server.py"))
_SERVER_IDS = itertools.count()


def wheel_names(entry: dict[str, Any]) -> list[str]:
    if "files" in entry:
        return list(entry["files"])
    dist = str(entry["name"]).replace("-", "_")
    pythons = entry["python"]
    assert isinstance(pythons, list)
    return [
        f"{dist}-{entry['version']}-cp{py.replace('.', '')}-cp{py.replace('.', '')}-"
        f"{entry['platform']}.whl"
        for py in pythons
    ]


def write_tree(root: Path, entries: list[dict[str, Any]]) -> None:
    """Both page formats for every project of ``entries``; the wheels themselves are not needed."""
    projects: dict[str, list[str]] = {}
    for entry in entries:
        projects.setdefault(canonicalize_name(str(entry["name"])), []).extend(wheel_names(entry))
    for project, names in projects.items():
        folder = root / "simple" / project
        folder.mkdir(parents=True)
        digests = {name: hashlib.sha256(name.encode()).hexdigest() for name in names}
        links = "".join(f'<a href="{n}#sha256={d}">{n}</a><br>\n' for n, d in digests.items())
        (folder / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n")
        files = [{"filename": n, "url": n, "hashes": {"sha256": d}} for n, d in digests.items()]
        doc = {"meta": {"api-version": "1.0"}, "name": project, "files": files}
        (folder / "index.json").write_text(json.dumps(doc))


@dataclass
class Server:
    url: str
    log: Path
    process: subprocess.Popen[bytes]

    def requests(self) -> str:
        return self.log.read_text() if self.log.exists() else ""


def serve(root: Path, *flags: str, scheme: str = "http") -> Server:
    root.mkdir(parents=True, exist_ok=True)
    tag = next(_SERVER_IDS)
    port_file, log = (
        root.with_name(f"{root.name}.{tag}.port"),
        root.with_name(f"{root.name}.{tag}.log"),
    )
    argv = [sys.executable, SERVER, str(root), "--port-file", str(port_file), "--access-log"]
    process = subprocess.Popen([*argv, str(log), *flags])
    deadline = time.monotonic() + 30
    while not port_file.exists():
        assert process.poll() is None and time.monotonic() < deadline, f"{root}: no server"
        time.sleep(0.02)  # the server writes its port file once it listens
    return Server(f"{scheme}://127.0.0.1:{port_file.read_text()}", log, process)
