"""The Neuron kernel driver: module, device nodes, sysfs devices and ``neuron-ls``."""

from __future__ import annotations

import grp
import json
import os
import stat
from pathlib import Path
from typing import Any

from neuron_env.command import clean_env, run
from neuron_env.errors import CommandFailed
from neuron_env.facts import DeviceNode, DriverFacts, NeuronDevice
from neuron_env.probe.holders import device_holders, in_host_pid_namespace
from neuron_env.probe.kernel_module import dkms_builds, module_for_kernel
from neuron_env.probe.os_release import kernel_release
from neuron_env.probe.sysroot import Sysroot

SYSFS_DEVICES = "sys/devices/virtual/neuron_device"
NEURON_LS_PATHS = ("opt/aws/neuron/bin/neuron-ls", "usr/bin/neuron-ls", "usr/local/bin/neuron-ls")
# Neuron 2.34 replaced `neuron-ls --json-output` with `--output-format json`; try the new one first.
NEURON_LS_JSON_FLAGS = (("--output-format", "json"), ("--json-output",))
NEURON_LS_ERROR_CHARS = 400


def probe_driver(sysroot: Path, *, neuron_ls_timeout: float = 5.0) -> DriverFacts:
    try:
        listing, listing_error = neuron_ls(sysroot, neuron_ls_timeout), None
    except (CommandFailed, RuntimeError) as exc:  # a broken tool must not hide the driver facts
        listing, listing_error = None, getattr(exc, "message", None) or str(exc)
    root = Sysroot.at(sysroot)
    loaded = module_loaded(sysroot)
    holders, unreadable = device_holders(root)
    return DriverFacts(
        module_loaded=loaded,
        module_version=root.file_text("sys/module/neuron/version"),
        devices=device_nodes(sysroot),
        sysfs=sysfs_devices(sysroot),
        neuron_ls=listing,
        neuron_ls_error=listing_error,
        holders=holders,
        holders_unreadable=unreadable,
        host_pid_namespace=in_host_pid_namespace(root),
        dkms_builds=dkms_builds(root),
        # A loaded module proves a build exists; only walk the module tree when it is not.
        module_for_kernel=None if loaded else module_for_kernel(root, kernel_release(sysroot)),
    )


def module_loaded(sysroot: Path) -> bool:
    modules = Sysroot.at(sysroot).file_text("proc/modules") or ""
    return any(line.split(" ", 1)[0] == "neuron" for line in modules.splitlines())


def device_nodes(sysroot: Path) -> tuple[DeviceNode, ...]:
    root = Sysroot.at(sysroot)
    names = [name for name in root.listdir("dev") if _is_neuron_node(name)]
    nodes = ((name, root.resolve(f"dev/{name}")) for name in sorted(names, key=_numeric_suffix))
    return tuple(_node(name, path) for name, path in nodes)


def _is_neuron_node(name: str) -> bool:
    number = name[len("neuron") :]
    return name.startswith("neuron") and number.isascii() and number.isdigit()


def _numeric_suffix(name: str) -> int:
    return int(name[len("neuron") :])


def _node(name: str, path: Path) -> DeviceNode:
    """The node ``/dev/<name>``, found at ``path`` (its real path under the sysroot)."""
    info = path.stat()
    try:
        group: str | None = grp.getgrgid(info.st_gid).gr_name
    except KeyError:
        group = str(info.st_gid)
    return DeviceNode(
        path="/dev/" + name,
        readable=os.access(path, os.R_OK),
        writable=os.access(path, os.W_OK),
        mode=stat.filemode(info.st_mode),
        group=group,
    )


def sysfs_devices(sysroot: Path) -> tuple[NeuronDevice, ...]:
    root = Sysroot.at(sysroot)
    names = [name for name in root.listdir(SYSFS_DEVICES) if _is_neuron_node(name)]
    return tuple(_sysfs_device(root, name) for name in sorted(names, key=_numeric_suffix))


def _sysfs_device(root: Sysroot, name: str) -> NeuronDevice:
    device = f"{SYSFS_DEVICES}/{name}"
    arch = f"{device}/info/architecture"
    cores = root.file_text(f"{device}/core_count")
    return NeuronDevice(
        name=name,
        core_count=int(cores) if cores and cores.isascii() and cores.isdigit() else None,
        arch_type=root.file_text(f"{arch}/arch_type"),
        device_name=root.file_text(f"{arch}/device_name"),
        instance_type=root.file_text(f"{arch}/instance_type"),
    )


def neuron_ls(sysroot: Path, timeout: float) -> Any:
    """``neuron-ls`` JSON when the tool is installed, else None. Failures raise (recorded)."""
    root = Sysroot.at(sysroot)
    found = next((p for p in NEURON_LS_PATHS if root.is_file(p)), None)
    if found is None:
        return None
    tool = root.resolve(found)  # the host's tool, where the host's links lead
    last_error: object = None
    for flags in NEURON_LS_JSON_FLAGS:
        result = run([tool, *flags], timeout=timeout, env=clean_env(), check=False)
        if result.returncode == 0:
            try:
                return json.loads(result.stdout)
            except (ValueError, RecursionError) as exc:  # RecursionError: nested past reason
                last_error = exc
        else:  # the dynamic loader's complaint (a missing library, an old glibc) names the cause
            last_error = _last_line(result.stderr) or f"exit {result.returncode}"
    raise RuntimeError(f"{tool} gave no JSON output ({last_error or 'non-zero exit'})")


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:NEURON_LS_ERROR_CHARS] if lines else ""
