"""Installed system packages (dpkg status), kernel headers and EFA devices, through a sysroot."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from neuron_env.facts import SystemFacts
from neuron_env.probe.os_release import kernel_release

DPKG_STATUS = "var/lib/dpkg/status"
INTERESTING_PREFIXES = ("aws-neuronx-", "aws-neuron-", "linux-headers-", "efa", "libfabric")


def probe_system(sysroot: Path) -> SystemFacts:
    packages = dict(installed_packages(sysroot / DPKG_STATUS))
    headers = f"linux-headers-{kernel_release(sysroot)}" in packages if packages else None
    return SystemFacts(packages=packages, kernel_headers=headers, efa_devices=efa_devices(sysroot))


def installed_packages(status_file: Path) -> Iterator[tuple[str, str]]:
    """(name, version) of installed packages whose names matter to Neuron, from dpkg's status."""
    try:
        text = status_file.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
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
    try:
        return tuple(sorted(p.name for p in (sysroot / "sys/class/infiniband").iterdir()))
    except OSError:
        return ()
