"""Real PEP 503 indexes on 127.0.0.1 for the install tests: tiny wheels with real names.

:func:`start_indexes` builds the wheels that ``tests/data/install/indexes.toml`` describes, applies
one failure mode from ``tests/data/install/faults/``, writes a static "simple" tree per index and
serves each with ``index_server.py`` in its own process (so that a test can kill it).
"""

from __future__ import annotations

import base64
import hashlib
import os
import signal
import socket
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import tomllib
from packaging.utils import canonicalize_name

DATA = Path(__file__).resolve().parents[1] / "data" / "install"
SERVER = Path(__file__).with_name("index_server.py")
INDEX_NAMES = ("neuron", "pytorch", "default")
WRONG_PACKAGE = (
    "WRONG PACKAGE. Please install the package from Neuron Repository - "
    "pip.repos.neuron.amazonaws.com"
)


@dataclass(frozen=True)
class WheelSpec:
    name: str
    version: str
    requires: tuple[str, ...] = ()
    scripts: tuple[str, ...] = ()
    kind: str = "real"
    reports: str | None = None
    padding: int = 0
    marker: str | None = None

    @property
    def module(self) -> str:
        return self.name.replace("-", "_")

    @property
    def filename(self) -> str:
        return f"{self.module}-{self.version}-py3-none-any.whl"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _module_source(spec: WheelSpec) -> str:
    if spec.kind == "placeholder":
        return f"raise ImportError({WRONG_PACKAGE!r})\n"
    source = f"__version__ = {spec.reports or spec.version!r}\n"
    if spec.kind in ("attacker", "pth-attacker"):
        source += "IMPOSTOR = True\n"
    if spec.scripts:
        source += "\n\ndef main():\n    print(__name__, __version__)\n"
    return source


def build_wheel(dest: Path, spec: WheelSpec) -> Path:
    """Write a valid (installable by pip and uv) pure-Python wheel for ``spec``."""
    files: dict[str, bytes] = {f"{spec.module}/__init__.py": _module_source(spec).encode()}
    if spec.padding:
        files[f"{spec.module}/_padding.bin"] = os.urandom(spec.padding)
    if spec.kind == "pth-attacker":  # runs at every interpreter start once installed
        hook = f"import pathlib; pathlib.Path({spec.marker!r}).write_text('ran')\n"
        files[f"{spec.module}-hook.pth"] = hook.encode()
    info = f"{spec.module}-{spec.version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {spec.name}\nVersion: {spec.version}\n"
    metadata += "".join(f"Requires-Dist: {r}\n" for r in spec.requires)
    files[f"{info}/METADATA"] = metadata.encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: neuron-env-tests\n" + (
        b"Root-Is-Purelib: true\nTag: py3-none-any\n"
    )
    if spec.scripts:
        lines = "".join(f"{s} = {spec.module}:main\n" for s in spec.scripts)
        files[f"{info}/entry_points.txt"] = f"[console_scripts]\n{lines}".encode()
    record = [f"{p},{_record_hash(d)},{len(d)}" for p, d in files.items()]
    files[f"{info}/RECORD"] = ("\n".join([*record, f"{info}/RECORD,,"]) + "\n").encode()
    path = dest / spec.filename
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return path


def load_specs() -> dict[str, list[WheelSpec]]:
    doc = tomllib.loads((DATA / "indexes.toml").read_text())
    return {index: [_spec(entry) for entry in doc.get(index, [])] for index in INDEX_NAMES}


def _spec(entry: dict[str, Any]) -> WheelSpec:
    return WheelSpec(
        name=entry["name"],
        version=entry["version"],
        requires=tuple(entry.get("requires", ())),
        scripts=tuple(entry.get("scripts", ())),
        kind=entry.get("kind", "real"),
    )


def load_fault(name: str | None) -> list[dict[str, Any]]:
    if name is None:
        return []
    faults: list[dict[str, Any]] = tomllib.loads((DATA / "faults" / f"{name}.toml").read_text())[
        "fault"
    ]
    return faults


def _apply_spec_faults(specs: dict[str, list[WheelSpec]], faults: list[dict[str, Any]]) -> None:
    for fault in faults:
        index = specs[fault["index"]]
        if fault["kind"] == "add":
            kind = fault.get("package-kind", "real")
            requires = tuple(fault.get("requires", ()))
            index.append(WheelSpec(fault["name"], fault["version"], requires, kind=kind))
            continue
        for i, spec in enumerate(index):
            if spec.filename != fault.get("file"):
                continue
            if fault["kind"] == "reports-version":
                index[i] = replace(spec, reports=fault["reports"])
            elif fault["kind"] == "extra-requirement":
                index[i] = replace(spec, requires=(*spec.requires, fault["requires"]))
            elif fault["kind"] in ("slow", "stall") and "padding" in fault:
                index[i] = replace(spec, padding=fault["padding"])


def write_index(root: Path, specs: list[WheelSpec], faults: list[dict[str, Any]]) -> None:
    """A static PEP 503 tree: ``simple/<project>/index.html`` with ``#sha256=`` links."""
    projects: dict[str, list[Path]] = {}
    for spec in specs:
        directory = root / "simple" / canonicalize_name(spec.name)
        directory.mkdir(parents=True, exist_ok=True)
        projects.setdefault(directory.name, []).append(build_wheel(directory, spec))
    corrupt = {f["file"] for f in faults if f["kind"] == "corrupt"}
    wrong_hash = {f["file"] for f in faults if f["kind"] == "wrong-hash"}
    for project, wheels in projects.items():
        links = []
        for wheel in sorted(wheels):
            if wheel.name in corrupt:
                wheel.write_bytes(b"this is not a zip archive\n" * 200)
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            if wheel.name in wrong_hash:
                digest = hashlib.sha256(b"something else").hexdigest()
            links.append(f'<a href="{wheel.name}#sha256={digest}">{wheel.name}</a><br>')
        page = "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        (root / "simple" / project / "index.html").write_text(page)
    root_links = "".join(f'<a href="{p}/">{p}</a><br>\n' for p in sorted(projects))
    (root / "simple" / "index.html").write_text(f"<html><body>\n{root_links}</body></html>\n")


@dataclass
class Indexes:
    """Three running indexes; ``urls`` maps neuron, pytorch and default to their simple roots."""

    root: Path
    urls: dict[str, str]
    access_logs: dict[str, Path]
    servers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def impostor_marker(self) -> Path:
        """The file a ``pth-attacker`` wheel's ``.pth`` writes when an interpreter starts."""
        return self.root / "impostor-ran"

    def args(self) -> list[str]:
        return [
            "--neuron-index", self.urls["neuron"],
            "--pytorch-index", self.urls["pytorch"],
            "--index-url", self.urls["default"],
        ]  # fmt: skip

    def requests(self, index: str) -> str:
        log = self.access_logs[index]
        return log.read_text() if log.exists() else ""

    def wait_for_request(self, index: str, fragment: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while fragment not in self.requests(index):
            if time.monotonic() > deadline:
                raise TimeoutError(f"no request for {fragment} on the {index} index")
            time.sleep(0.05)

    def kill(self, index: str) -> None:
        server = self.servers.pop(index)
        server.send_signal(signal.SIGKILL)
        server.wait()

    def stop(self) -> None:
        for index in list(self.servers):
            self.kill(index)


def start_indexes(tmp: Path, fault: str | None = None) -> Indexes:
    """Build, fault and serve the three indexes under ``tmp``."""
    specs = load_specs()
    faults = load_fault(fault)
    _apply_spec_faults(specs, faults)
    indexes = Indexes(tmp, {}, {})
    for index in specs.values():
        index[:] = [replace(s, marker=str(indexes.impostor_marker)) for s in index]
    for name in INDEX_NAMES:
        root = tmp / name
        index_faults = [f for f in faults if f["index"] == name]
        write_index(root, specs[name], index_faults)
        indexes.access_logs[name] = tmp / f"{name}.access.log"
        if any(f["kind"] == "down" for f in index_faults):
            indexes.urls[name] = f"http://127.0.0.1:{_closed_port()}/simple"
            continue
        if any(f["kind"] == "unknown-host" for f in index_faults):
            indexes.urls[name] = f"https://{name}-index.invalid/simple"  # never resolves
            continue
        port, server = _serve(root, indexes.access_logs[name], index_faults)
        indexes.servers[name] = server
        indexes.urls[name] = f"http://127.0.0.1:{port}/simple"
    return indexes


def _serve(
    root: Path, access_log: Path, faults: list[dict[str, Any]]
) -> tuple[int, subprocess.Popen[bytes]]:
    port_file = root.with_suffix(".port")
    argv = [sys.executable, str(SERVER), str(root), "--port-file", str(port_file)]
    argv += ["--access-log", str(access_log)]
    for fault in faults:
        if fault["kind"] in ("cut", "slow", "stall"):
            argv += [f"--{fault['kind']}", fault["file"]]
        elif fault["kind"] == "error-500":
            argv += ["--error-500", fault["project"]]
        elif fault["kind"] == "hold":
            argv += ["--hold", fault["path"]]
    server = subprocess.Popen(argv)
    deadline = time.monotonic() + 30
    while not port_file.exists():
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"index server for {root} did not start")
        time.sleep(0.02)
    return int(port_file.read_text()), server


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


#: phase -> (index fault, the request that shows the phase is reached)
PHASES = {
    "resolving": ("resolve-held", "GET /simple/torch/ "),
    "downloading": ("download-stalls", "GET /simple/torch/torch-2.14.0"),
}


def wait_for_new_request(
    indexes: Indexes, fragment: str, seen: int, proc: subprocess.Popen[str]
) -> None:
    deadline = time.monotonic() + 120
    while fragment not in indexes.requests("pytorch")[seen:]:
        assert proc.poll() is None, f"download ended before asking for {fragment}"
        assert time.monotonic() < deadline, f"download never asked for {fragment}"
        time.sleep(0.02)
