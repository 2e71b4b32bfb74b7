"""Driver checks: the kernel module and its version, and the device nodes."""

from __future__ import annotations

import re
import shlex

from packaging.version import Version

from neuron_env.checks.baseline import compare_system_package
from neuron_env.checks.dkms import missing_build, rebuild_fix
from neuron_env.checks.host_kind import (
    apt_step,
    device_fix,
    driver_step,
    image_based,
    in_container,
)
from neuron_env.checks.model import Context, Verdict, fail, not_compared, ok, warn
from neuron_env.checks.versions import loose_version
from neuron_env.facts import HostFacts
from neuron_env.wording import plural

# The dynamic loader's words, as printed when a program cannot start.
LIBRARY_MISSING = re.compile(r"error while loading shared libraries: ([^\s:]+): cannot open")
GLIBC_MISSING = re.compile(r"version [`']GLIBC_([0-9.]+)' not found")
# neuron-ls's words when the driver gives it no device (aws-neuron/aws-neuron-sdk issue #633):
# FATA[0000] Failed to discover neuron devices error="Unable to read device information from the
# driver. Make sure aws-neuronx-dkms is installed and the neuron driver is accessible."
NO_DEVICE_FROM_DRIVER = re.compile(
    r"Failed to discover neuron devices|Unable to read device information from the driver"
)

DRIVER_PACKAGE = "aws-neuronx-dkms"
RELOAD = "sudo rmmod neuron && sudo modprobe neuron"
# A driver version is dotted numbers (2.31.8.0); a leading '2' of something else is no version,
# so it reads as unknown, never as "older than" the release's.
DRIVER_VERSION = re.compile(r"^\d+\.\d+\.\d+")


def check_module(facts: HostFacts, ctx: Context) -> Verdict:
    """``driver.module``: the kernel module 'neuron' is loaded, at least at the release's driver
    version (fixes say to run them on the host from a container)."""
    assert facts.driver is not None
    pin = ctx.release.system_packages.get(DRIVER_PACKAGE)
    wanted = pin.version if pin else None
    # Quoted: an unquoted 'pkg=1.2*' is a glob the shell may expand against the working directory.
    install = "sudo apt-get install -y " + shlex.quote(
        f"{DRIVER_PACKAGE}={wanted}*" if wanted else DRIVER_PACKAGE
    )
    if not facts.driver.module_loaded:
        return fail("The Neuron kernel driver (module 'neuron') is not loaded",
                    fix=_load_fix(facts, install))  # fmt: skip
    version_text = facts.driver.module_version or _packaged_driver(facts)
    version = _driver_version(version_text)
    if version is None:
        shown = f" ({version_text!r})" if version_text else ""
        return warn(
            f"Neuron driver loaded; its version{shown} is unknown",
            fix=_host_step(facts, f"modinfo neuron; {install}"),
        )
    return _judge_driver_version(facts, ctx, version_text or "", install)


def _judge_driver_version(facts: HostFacts, ctx: Context, shown: str, install: str) -> Verdict:
    """The loaded driver against the release's version; where it lists none, against the newest
    earlier release's (older than that is certainly too old); with neither: not compared."""
    release = ctx.release.version
    found = compare_system_package(ctx, DRIVER_PACKAGE, shown)
    fix = _host_step(facts, f"{install} && {RELOAD}")
    if found.too_old and found.earlier and found.own is None:
        return fail(
            f"Neuron driver {shown} is older than the {found.earlier.version} that Neuron "
            f"{found.earlier.release} shipped: too old for Neuron {release}",
            fix=fix,
            detail=f"Neuron {release} lists no driver version; apt installs the newest.",
        )
    if found.own is not None and (found.behind or found.too_old):
        return fail(
            f"Neuron driver {shown} is older than the {found.own.version} Neuron {release} needs",
            fix=fix,
        )
    if found.own is not None:
        return ok(f"Neuron driver {shown} loaded (Neuron {release} needs {found.own.version})")
    if found.earlier is not None:
        return ok(
            f"Neuron driver {shown} loaded (at least the {found.earlier.version} of Neuron "
            f"{found.earlier.release}; Neuron {release} lists no driver version)"
        )
    return not_compared(
        f"Neuron {release} lists no version of {DRIVER_PACKAGE}, and no earlier release "
        f"neuron-env knows does (driver {shown} loaded)"
    )


def _load_fix(facts: HostFacts, install: str) -> str:
    # In a container the driver is the host's: neither its dpkg database nor apt here counts.
    if in_container(facts) or image_based(facts):
        return driver_step(facts, f"{install} && sudo modprobe neuron")
    if missing_build(facts):  # modprobe alone would fail: no build for this kernel
        return rebuild_fix(facts)
    packaged = facts.system is not None and DRIVER_PACKAGE in facts.system.packages
    if packaged:
        return "sudo modprobe neuron"
    return apt_step(facts, f"{install} && sudo modprobe neuron")


def _driver_version(text: str | None) -> Version | None:
    return loose_version(text) if text and DRIVER_VERSION.match(text.strip()) else None


def _host_step(facts: HostFacts, command: str) -> str:
    """A driver step as it fits where this runs: on the host from a container, never apt on an
    image-based host or in a pod."""
    return driver_step(facts, command)


def _packaged_driver(facts: HostFacts) -> str | None:
    return facts.system.packages.get(DRIVER_PACKAGE) if facts.system else None


def check_devices(facts: HostFacts, ctx: Context) -> Verdict:
    """``driver.devices``: /dev/neuron* present, readable and writable by this user, as many as the
    instance type has."""
    assert facts.driver is not None
    nodes = facts.driver.devices
    if not nodes:
        return _no_devices(facts)
    blocked = [n for n in nodes if not (n.readable and n.writable)]
    if blocked:
        sample = blocked[0]
        group = sample.group or "neuron"
        # The group name comes from the facts (a snapshot may be hostile): quote it.
        return fail(
            f"{len(blocked)} of {len(nodes)} Neuron device nodes are not readable and writable by "
            f"this user ({sample.path} is {sample.mode} group {group})",
            fix=_host_step(facts, f'sudo usermod -aG {shlex.quote(group)} "$USER"'),
            detail="Then log in again (or run as root) for the new group to apply.",
        )
    expected = _expected_devices(facts, ctx)
    if expected is not None and expected != len(nodes):
        return warn(
            f"{plural(len(nodes), 'Neuron device')}, but this instance type has {expected}",
            fix="Check 'neuron-ls'; in a container, pass every /dev/neuron* device.",
        )
    listing_error = facts.driver.neuron_ls_error
    if listing_error:
        return _neuron_ls_broken(facts, len(nodes), listing_error)
    return ok(f"{plural(len(nodes), 'Neuron device')}, accessible")


def _neuron_ls_broken(facts: HostFacts, count: int, error: str) -> Verdict:
    """neuron-ls runs but fails: the loader's words name a missing library or a glibc floor."""
    devices = f"{plural(count, 'Neuron device')}, accessible"
    reinstall = _host_step(facts, "sudo apt-get install --reinstall -y aws-neuronx-tools")
    if NO_DEVICE_FROM_DRIVER.search(error):  # the tool works; the driver gave it nothing
        return warn(
            f"{devices}; neuron-ls cannot read them from the Neuron driver",
            fix=_host_step(
                facts, f"sudo apt-get install --reinstall -y {DRIVER_PACKAGE} && {RELOAD}"
            ),
            detail=error,
        )
    if glibc := GLIBC_MISSING.search(error):
        have = f" (this host has {facts.os.glibc})" if facts.os and facts.os.glibc else ""
        return warn(
            f"{devices}; neuron-ls cannot run: it needs glibc {glibc.group(1)} or newer{have}",
            fix=f"Use an OS with glibc {glibc.group(1)} or newer, or install the "
            "aws-neuronx-tools of the Neuron apt repository for this OS's release.",
            detail=error,
        )
    if library := LIBRARY_MISSING.search(error):
        return warn(
            f"{devices}; neuron-ls cannot run: the shared library {library.group(1)} is missing",
            fix=reinstall,
            detail=f"{error}\nThe package that provides it: "
            f"apt-file search {shlex.quote(library.group(1))}",
        )
    return warn(f"{devices}; neuron-ls failed: {error}", fix=reinstall)


def _no_devices(facts: HostFacts) -> Verdict:
    assert facts.driver is not None
    if facts.driver.module_loaded:
        fix = device_fix(facts) if in_container(facts) else RELOAD
        return fail("The driver is loaded but there are no /dev/neuron* device nodes", fix=fix)
    return fail(
        "No /dev/neuron* device nodes (the driver is not loaded)",
        fix=_host_step(facts, "sudo modprobe neuron"),
    )


def _expected_devices(facts: HostFacts, ctx: Context) -> int | None:
    instance_type = facts.ec2.instance_type if facts.ec2 else None
    known = ctx.release.instance_types.get(instance_type or "")
    return known.chips if known else None
