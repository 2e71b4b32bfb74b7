"""What each kind of fact is read from, for ``doctor -v``: where a passing check looked.

A check passes on facts the probes gathered; naming their source lets a person see that the right
host and interpreter were read (a ``--sysroot`` mount, a ``--python`` target), not another one.
"""

from __future__ import annotations

from neuron_env.facts import HostFacts

READS = {
    "os": "{root}etc/os-release, {root}proc/sys/kernel, the C library under {root}",
    "python": "{python}: its version and installed distributions",
    "ec2": "the instance metadata service (IMDSv2), else the driver's sysfs under {root}",
    "driver": "{root}proc/modules, {root}sys/module/neuron, {root}dev/neuron*, {root}proc/*/fd, "
    "neuron-ls",
    "system": "{root}var/lib/dpkg/status and {root}sys/class/infiniband",
    "env": "this process's environment and its cache directories",
    "device": "a test run by {python}",
}


def read_from(needs: tuple[str, ...], facts: HostFacts) -> str:
    """``read: …`` for a check that needs the fact kinds ``needs``, for this report's host."""
    root = facts.sysroot.rstrip("/") + "/"
    python = facts.python.executable if facts.python is not None else "the target interpreter"
    where = [READS[kind].format(root=root, python=python) for kind in needs if kind in READS]
    return "; ".join(where)
