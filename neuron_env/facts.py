"""Host facts: what the probes found, as plain frozen data, and the JSON snapshot format.

Probes (:mod:`neuron_env.probe`) produce :class:`HostFacts`; checks (:mod:`neuron_env.checks`)
judge them. A snapshot (``neuron-env facts -o host.json``) is the versioned envelope
``neuron-env/facts/v1`` with these fields at the top level; ``neuron-env doctor --facts`` and the
fleet report read it back. A section is ``None`` when its probe failed; the reason is in
``probe_errors``.
"""

from __future__ import annotations

import sys
from dataclasses import field
from pathlib import Path
from typing import Any, BinaryIO, Literal

from neuron_env.errors import MalformedFile
from neuron_env.frozen import frozen
from neuron_env.schema import JSON_LENIENT, SchemaError, parse

SNAPSHOT_COMMAND = "facts"
SNAPSHOT_MAJOR = 1


@frozen
class ProbeError:
    """A probe that failed or timed out; recorded instead of crashing."""

    probe: str
    kind: Literal["timeout", "error"]
    message: str
    fix: str = ""
    """What the failure itself says to do (a link under ``--sysroot`` leading off it: one of
    :data:`PROBE_FIXES`); empty where it says nothing (the checks that needed the probe then
    advise a run with --debug)."""


REFUSED_LINK_FIX = (
    "Make the link stay inside the host's tree (a relative link, or an absolute one as the host "
    "sees it), or point --sysroot at the host's real root."
)
NOT_A_FILE_FIX = (
    "Put a regular file there (or remove it), or point --sysroot at the host's real root."
)
LINK_LOOP_FIX = (
    "Break the loop (each chain of links must end at a file or a folder), or point --sysroot at "
    "the host's real root."
)
NOT_PYTHON_FIX = "Point --python at a Python interpreter (an environment's bin/python)."
PROBE_FIXES = frozenset({REFUSED_LINK_FIX, NOT_A_FILE_FIX, LINK_LOOP_FIX, NOT_PYTHON_FIX})
"""The only fixes a :class:`ProbeError` is shown with: neuron-env's own words. A snapshot is data
anyone may have written; another ``fix`` in one is never shown as advice."""


@frozen
class OsFacts:
    """The operating system: /etc/os-release, the kernel, the architecture, glibc, and whether
    this is a container."""

    id: str | None = None
    version_id: str | None = None
    pretty_name: str | None = None
    kernel: str | None = None
    arch: str | None = None
    glibc: str | None = None
    container: bool | None = None
    kubernetes: bool | None = None
    """In a Kubernetes pod (``KUBERNETES_SERVICE_HOST`` set, or a ``kubepods`` cgroup); None in
    snapshots taken before neuron-env looked."""

    @property
    def key(self) -> str | None:
        """``ubuntu-26.04``: the matrix's OS key, from /etc/os-release's ID and VERSION_ID."""
        return f"{self.id}-{self.version_id}" if self.id and self.version_id else None


# The start of Ec2Facts.reason when IMDS refused the token request with HTTP 403: it is turned
# off for the instance, or the request is not allowed (the probe writes it, platform.instance
# reads it).
IMDS_FORBIDDEN = "IMDS refused the token request with HTTP 403 Forbidden"


@frozen
class Ec2Facts:
    """What the instance metadata service (IMDSv2) says, or why there is no answer."""

    on_ec2: bool
    reason: str = ""
    instance_type: str | None = None
    instance_id: str | None = None
    ami_id: str | None = None
    region: str | None = None
    availability_zone: str | None = None


@frozen
class DeviceNode:
    """One ``/dev/neuronN`` node: whether this user can open it, its mode and its group."""

    path: str
    readable: bool
    writable: bool
    mode: str = ""
    group: str | None = None


@frozen
class NeuronDevice:
    """One ``/sys/devices/virtual/neuron_device/neuronN``."""

    name: str
    core_count: int | None = None
    arch_type: str | None = None
    device_name: str | None = None
    instance_type: str | None = None


@frozen
class DeviceHolder:
    """A process with a ``/dev/neuronN`` open (``/proc/<pid>/fd``, as ``fuser`` finds it)."""

    pid: int
    command: str
    devices: tuple[str, ...] = ()


@frozen
class DkmsBuild:
    """One ``/var/lib/dkms/aws-neuronx/<version>/<kernel>/``: a driver build DKMS made."""

    version: str
    kernel: str


@frozen
class DriverFacts:
    """The Neuron kernel driver: the loaded module, its device nodes and sysfs entries, and what
    ``neuron-ls`` reports."""

    module_loaded: bool
    module_version: str | None = None
    devices: tuple[DeviceNode, ...] = ()
    sysfs: tuple[NeuronDevice, ...] = ()
    neuron_ls: Any = None
    neuron_ls_error: str | None = None
    holders: tuple[DeviceHolder, ...] | None = None
    """Processes holding a Neuron device node; None in snapshots taken before neuron-env looked."""
    holders_unreadable: int = 0
    """Processes whose open files this user may not read (others' processes, without root)."""
    host_pid_namespace: bool | None = None
    """Whether neuron-env ran in the host's PID namespace; False in a container's own, where the
    PIDs neuron-ls prints are the host's; None when /proc could not tell (or older snapshots)."""
    dkms_builds: tuple[DkmsBuild, ...] | None = None
    """The aws-neuronx builds DKMS made, for any kernel; None in older snapshots."""
    module_for_kernel: bool | None = None
    """A ``neuron.ko*`` under ``/lib/modules/<running kernel>/``; looked for only when the module
    is not loaded (a loaded module proves a build), else None."""


@frozen
class SystemFacts:
    """The installed system packages that matter to Neuron (dpkg names to versions), whether the
    running kernel's headers are installed, and the EFA devices."""

    packages: dict[str, str] = field(default_factory=dict)
    kernel_headers: bool | None = None
    efa_devices: tuple[str, ...] = ()
    """Every ``/sys/class/infiniband/*`` device."""
    efa_bound: tuple[str, ...] | None = None
    """Those bound to the ``efa`` driver (``device/driver``); None in older snapshots."""


@frozen
class Distribution:
    """An installed Python distribution in the target environment."""

    version: str
    summary: str = ""
    installer: str | None = None
    source: str | None = None
    # Read for Neuron-named distributions only: what tells a placeholder from the real thing.
    author: str = ""
    license: str = ""
    description: str = ""
    """The start of the METADATA description body, whitespace collapsed."""
    stub: bool = False
    """The only file is one small ``__init__.py`` that raises (the placeholder shape)."""
    requires_dist: tuple[str, ...] | None = None
    """Its ``Requires-Dist`` lines as written (markers included); None in snapshots taken before
    neuron-env collected them, which the requirements check then skips."""
    duplicates: tuple[str, ...] = ()
    """The versions of further records of this name in the same folder: an install or uninstall
    that was interrupted left them, and which one's files are on disk is unknown."""


@frozen
class PipConfig:
    """The target's pip index configuration (files and ``PIP_*`` variables)."""

    index_url: str | None = None
    extra_index_urls: tuple[str, ...] = ()
    find_links: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


PYTHON_PROBE_FLOOR = (3, 8)
"""The oldest Python neuron-env's code in a target runs on (the probe, the device workers;
TorchNeuron itself needs 3.12 or later): of an older interpreter the probe records the version
alone (:attr:`PythonFacts.readable` False), and a worker says it is too old."""
PYTHON_PROBE_FLOOR_TEXT = ".".join(str(part) for part in PYTHON_PROBE_FLOOR)


def below_probe_floor(version: str) -> bool | None:
    """Whether Python ``version`` (``3.6.15``) is older than :data:`PYTHON_PROBE_FLOOR`; None
    where it is no version (a snapshot may hold anything)."""
    parts = version.split(".")[:2]
    if len(parts) != 2 or not all(part.isdigit() for part in parts):
        return None
    return (int(parts[0]), int(parts[1])) < PYTHON_PROBE_FLOOR


@frozen
class PathDistribution:
    """A distribution in a folder a plain ``python`` imports from besides the environment."""

    version: str
    folder: str


@frozen
class ImportPath:
    """What a plain ``python`` (not the probe's ``python -I``) imports from besides the
    environment: PYTHONPATH's folders (ahead of everything) and the user's site-packages (ahead of
    the environment's own), with the distributions found there, first one winning."""

    pythonpath: tuple[str, ...] = ()
    user_site: str | None = None
    distributions: dict[str, PathDistribution] = field(default_factory=dict)

    def origin(self, folder: str) -> str:
        """``PYTHONPATH's`` or ``the user's site-packages``: how ``folder`` gets on sys.path."""
        return "PYTHONPATH's" if folder in self.pythonpath else "the user's site-packages"


@frozen
class PythonFacts:
    """The target interpreter and its environment: version, venv, installed distributions,
    registered torch backends and pip configuration."""

    executable: str
    version: str
    implementation: str = "cpython"
    prefix: str = ""
    in_venv: bool = False
    distributions: dict[str, Distribution] = field(default_factory=dict)
    torch_backends: tuple[str, ...] = ()
    pip: PipConfig = field(default_factory=PipConfig)
    readable: bool = True
    """False for an interpreter older than the probe runs on: its version alone is known, not
    its packages (a snapshot from before this field reads as True)."""
    venv_version: str | None = None
    """The Python version the venv was made with (its pyvenv.cfg); None outside a venv and in
    snapshots from before neuron-env read it."""
    import_path: ImportPath | None = None
    """What PYTHONPATH and the user's site-packages add to a plain run; None in snapshots taken
    before neuron-env looked, which the python.path check then skips."""

    @property
    def minor(self) -> str:
        """``3.12`` for ``3.12.4``."""
        return ".".join(self.version.split(".")[:2])

    def dist(self, name: str) -> Distribution | None:
        return self.distributions.get(name)


@frozen
class CacheDir:
    """A compile-cache or debug directory a Neuron variable names (or its default): whether it
    exists, is writable, and how much room it has."""

    variable: str
    path: str
    exists: bool
    writable: bool
    free_bytes: int | None = None


@frozen
class EnvFacts:
    """The Neuron-related environment variables and the cache directories they point at."""

    variables: dict[str, str] = field(default_factory=dict)
    cache_dirs: tuple[CacheDir, ...] = ()


@frozen
class DeviceRun:
    """The outcome of the smoke test or the self-test suite, as the doctor keeps it."""

    ok: bool
    summary: str
    details: tuple[str, ...] = ()
    hint: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    wall_s: float = 0.0


@frozen
class DeviceFacts:
    """What the device computed, from ``--level 1`` (smoke) and ``--level 2`` (standard suite)."""

    device: str
    level: int
    smoke: DeviceRun | None = None
    selftest: DeviceRun | None = None


@frozen
class HostFacts:
    """Everything neuron-env learned about one host and one target Python environment."""

    collected_at: str
    sysroot: str
    hostname: str | None = None
    duration_s: float = 0.0
    os: OsFacts | None = None
    ec2: Ec2Facts | None = None
    driver: DriverFacts | None = None
    system: SystemFacts | None = None
    python: PythonFacts | None = None
    env: EnvFacts | None = None
    device: DeviceFacts | None = None
    probe_errors: tuple[ProbeError, ...] = ()

    def error_for(self, probe: str) -> ProbeError | None:
        return next((e for e in self.probe_errors if e.probe == probe), None)


def read_snapshot(path: Path) -> HostFacts:
    """Read a facts snapshot (or a doctor JSON report, which embeds one), within bounds; ``-``
    reads it from stdin (``ssh node neuron-env facts | neuron-env doctor --facts -``)."""
    from neuron_env.input_files import SNAPSHOT_LIMITS, InputRejected, load_json, load_json_stream

    from_stdin = str(path) == "-"
    name = "stdin" if from_stdin else str(path)
    try:
        doc = (
            load_json_stream(_stdin(), SNAPSHOT_LIMITS)
            if from_stdin
            else load_json(path, SNAPSHOT_LIMITS)
        )
    except InputRejected as exc:
        where = f" at {exc.key}" if exc.key else ""
        raise MalformedFile(
            f"Cannot read snapshot {name}: {exc.problem}{where}.",
            hint=_create_one(),
        ) from None
    return facts_from_document(doc, name)


def _stdin() -> BinaryIO:
    """stdin's bytes, for ``--facts -``; a terminal (or none) is bad input, not a wait."""
    stream = sys.stdin
    if stream is None or stream.isatty():
        from neuron_env.errors import BadInput

        raise BadInput("--facts - reads a snapshot from stdin, which is a terminal here.",
                       hint="Pipe one in (what 'facts' prints on the node, e.g. over ssh), or "
                       "give the snapshot's file.")  # fmt: skip
    return stream.buffer


def _create_one() -> str:
    """Where the snapshot's path is unknown (or is the bad file itself): a new file here."""
    from neuron_env.invocation import command

    return f"Create one with '{command('facts', '-o', 'host.json')}'."


def facts_from_document(doc: Any, name: str) -> HostFacts:
    """Parse a decoded snapshot; ``name`` says where it came from in error messages."""
    schema = doc.get("schema", "") if isinstance(doc, dict) else ""
    if not isinstance(schema, str):
        raise MalformedFile(
            f"{name} is not a neuron-env facts snapshot: its 'schema' is not a string.",
            hint=_create_one(),
        )
    kind, _, version = schema.removeprefix("neuron-env/").rpartition("/v")
    if kind not in (SNAPSHOT_COMMAND, "doctor") or not isinstance(doc.get("facts"), dict):
        raise MalformedFile(
            f"{name} is not a neuron-env facts snapshot (schema {schema[:100] or 'missing'!r}).",
            hint=_create_one(),
        )
    if version != str(SNAPSHOT_MAJOR):
        raise MalformedFile(
            f"{name} is a facts snapshot of schema version {version}; "
            f"this neuron-env reads version {SNAPSHOT_MAJOR}.",
            hint="Collect it again with this neuron-env, or upgrade neuron-env.",
        )
    try:
        return parse(HostFacts, doc["facts"], ["facts"], JSON_LENIENT)
    except SchemaError as exc:
        raise MalformedFile(f"{name}: {exc.key}: {exc.problem}.") from None
