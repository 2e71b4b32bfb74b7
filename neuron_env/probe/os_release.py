"""OS, kernel, CPU architecture, glibc and container facts, read through a sysroot."""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from neuron_env.facts import OsFacts
from neuron_env.probe.sysroot import Sysroot

LIBC_CANDIDATES = (
    "lib/x86_64-linux-gnu/libc.so.6",
    "lib/aarch64-linux-gnu/libc.so.6",
    "usr/lib/x86_64-linux-gnu/libc.so.6",
    "usr/lib/aarch64-linux-gnu/libc.so.6",
    "lib64/libc.so.6",
    "usr/lib64/libc.so.6",
)
_GLIBC_RE = re.compile(rb"release version (\d+\.\d+)")
LIBC_MAX_BYTES = 64 << 20  # libc.so.6 is about 2 MiB; a larger one is not read whole
ENVIRON_MAX_BYTES = 4 << 20  # PID 1's environment is bounded by the kernel's ARG_MAX


def probe_os(sysroot: Path, environ: Mapping[str, str] | None = None) -> OsFacts:
    root = Sysroot.at(sysroot)
    kubernetes = in_kubernetes(sysroot, os.environ if environ is None else environ)
    release = parse_os_release(
        root.file_text("etc/os-release") or root.file_text("usr/lib/os-release")
    )
    return OsFacts(
        id=release.get("ID"),
        version_id=release.get("VERSION_ID"),
        pretty_name=release.get("PRETTY_NAME"),
        kernel=kernel_release(sysroot),
        arch=root.file_text("proc/sys/kernel/arch") or os.uname().machine,
        glibc=glibc_version(sysroot),
        # A pod is a container even where cgroup v2 and containerd leave no other trace.
        container=in_container(sysroot) or kubernetes,
        kubernetes=kubernetes,
    )


def kernel_release(sysroot: Path) -> str:
    """``uname -r`` of the host behind ``sysroot`` (procfs first, so a mounted host wins)."""
    return Sysroot.at(sysroot).file_text("proc/sys/kernel/osrelease") or os.uname().release


def parse_os_release(text: str | None) -> dict[str, str]:
    """``KEY=value`` lines with shell quoting, as os-release(5) specifies."""
    values: dict[str, str] = {}
    for line in (text or "").splitlines():
        key, sep, raw = line.partition("=")
        if not sep or key.strip().startswith("#"):
            continue
        try:
            parts = shlex.split(raw)
        except ValueError:
            continue
        values[key.strip()] = parts[0] if parts else ""
    return values


def glibc_version(sysroot: Path) -> str | None:
    root = Sysroot.at(sysroot)
    for candidate in LIBC_CANDIDATES:
        data = root.file_bytes(candidate, LIBC_MAX_BYTES)
        match = _GLIBC_RE.search(data) if data else None
        if match:
            return match.group(1).decode()
    if sysroot == Path("/"):
        libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
        return libc.split()[-1] if libc.startswith("glibc") else None
    return None


def in_container(sysroot: Path) -> bool:
    root = Sysroot.at(sysroot)
    if root.exists(".dockerenv") or root.exists("run/.containerenv"):
        return True
    cgroup = root.file_text("proc/1/cgroup") or ""
    if any(word in cgroup for word in ("docker", "kubepods", "containerd", "libpod")):
        return True
    # With cgroup v2 namespaces /proc/1/cgroup reads "0::/" inside a container (EKS, containerd);
    # container managers and images ('neuron-env image render') set container= in PID 1's
    # environment, which systemd-detect-virt reads too.
    environ = root.file_text("proc/1/environ", ENVIRON_MAX_BYTES) or ""
    return any(entry.startswith("container=") for entry in environ.split("\0"))


def in_kubernetes(sysroot: Path, environ: Mapping[str, str]) -> bool:
    """A Kubernetes pod: the kubelet sets ``KUBERNETES_SERVICE_HOST`` in every container, and
    cgroup v1 paths name ``kubepods``. This process's environment counts only when it runs on the
    host it judges: under ``--sysroot /host`` a privileged pod judges its node, not itself."""
    root = Sysroot.at(sysroot)
    if root.root == Path("/") and environ.get("KUBERNETES_SERVICE_HOST"):
        return True
    if "kubepods" in (root.file_text("proc/1/cgroup") or ""):
        return True
    environ_1 = root.file_text("proc/1/environ", ENVIRON_MAX_BYTES) or ""
    return any(entry.startswith("KUBERNETES_SERVICE_HOST=") for entry in environ_1.split("\0"))
