"""Installed system packages (dpkg status), kernel headers and EFA devices, through a sysroot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from neuron_env.facts import SystemFacts
from neuron_env.probe.os_release import kernel_release
from neuron_env.probe.sysroot import Sysroot

DPKG_STATUS = "var/lib/dpkg/status"
DPKG_STATUS_MAX_BYTES = 256 << 20  # a few MiB on a large server; past this it is not a status file
INTERESTING_PREFIXES = ("aws-neuronx-", "aws-neuron-", "linux-headers-", "efa", "libfabric")


def probe_system(sysroot: Path) -> SystemFacts:
    status = Sysroot.at(sysroot).file_bytes(DPKG_STATUS, DPKG_STATUS_MAX_BYTES)
    packages = dict(dpkg_packages(status.decode("utf-8", errors="replace") if status else ""))
    headers = f"linux-headers-{kernel_release(sysroot)}" in packages if packages else None
    return SystemFacts(
        packages=packages,
        kernel_headers=headers,
        efa_devices=efa_devices(sysroot),
        efa_bound=efa_bound(sysroot),
    )


def dpkg_packages(text: str) -> Iterator[tuple[str, str]]:
    """(name, version) of the installed packages that matter to Neuron in dpkg status ``text``."""
    for stanza in text.split("\n\n"):
        fields = _fields(stanza)
        name, version = fields.get("Package", ""), fields.get("Version", "")
        installed = fields.get("Status", "").endswith(" installed")
        if installed and name.startswith(INTERESTING_PREFIXES):
            yield name, version


def _fields(stanza: str) -> dict[str, str]:
    fields: dict[str, str] = {}
    for line in stanza.splitlines():
        if line[:1].isspace():
            continue  # continuation of a multi-line field
        key, sep, value = line.partition(":")
        if sep:
            fields[key] = value.strip()
    return fields


def efa_devices(sysroot: Path) -> tuple[str, ...]:
    return tuple(Sysroot.at(sysroot).listdir("sys/class/infiniband"))


def efa_bound(sysroot: Path) -> tuple[str, ...]:
    """The InfiniBand devices whose ``device/driver`` link leads to the ``efa`` driver."""
    root = Sysroot.at(sysroot)
    return tuple(
        name
        for name in root.listdir("sys/class/infiniband")
        if root.resolve(f"sys/class/infiniband/{name}/device/driver").name == "efa"
    )
