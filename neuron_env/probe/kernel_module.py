"""Whether the Neuron module was built for the running kernel: DKMS's builds and the module file.

After a kernel update and reboot the module is not loaded when DKMS has no build for the new
kernel. ``/var/lib/dkms/aws-neuronx/<version>/<kernel>/`` names the kernels DKMS built for;
``/lib/modules/<kernel>/**/neuron.ko*`` is the installed module (DKMS puts it in
``updates/dkms``; a distribution may ship it elsewhere).
"""

from __future__ import annotations

import os

from neuron_env.facts import DkmsBuild
from neuron_env.probe.sysroot import Sysroot

DKMS_TREE = "var/lib/dkms/aws-neuronx"
NOT_KERNELS = ("source", "build")  # DKMS's own entries beside the per-kernel folders
MODULE_NAMES = frozenset({"neuron.ko", "neuron.ko.gz", "neuron.ko.xz", "neuron.ko.zst"})


def dkms_builds(root: Sysroot) -> tuple[DkmsBuild, ...]:
    """Every (version, kernel) DKMS built aws-neuronx for."""
    return tuple(
        DkmsBuild(version, kernel)
        for version in root.listdir(DKMS_TREE)
        if version[:1].isdigit()
        for kernel in root.listdir(f"{DKMS_TREE}/{version}")
        if kernel not in NOT_KERNELS and kernel[:1].isdigit()
    )


def module_for_kernel(root: Sysroot, kernel: str) -> bool:
    """A ``neuron.ko*`` under ``/lib/modules/<kernel>/`` (links inside it are not followed)."""
    top = root.resolve(f"lib/modules/{kernel}")
    return any(not MODULE_NAMES.isdisjoint(files) for _, _, files in os.walk(top))
