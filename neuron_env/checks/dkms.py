"""Whether the Neuron module exists for the running kernel: after an unattended kernel update and
a reboot, DKMS may have built the driver for the old kernel only, and the module is not loaded."""

from __future__ import annotations

import shlex

from neuron_env.checks.host_kind import image_based, in_container
from neuron_env.checks.model import Context, Verdict, fail, ok, skip
from neuron_env.facts import HostFacts
from neuron_env.wording import join_words

RPM_FAMILY = ("amzn", "rhel", "fedora", "centos", "rocky", "almalinux")


def missing_build(facts: HostFacts) -> bool:
    """The module is not loaded, not installed for this kernel, and DKMS built it for others."""
    driver = facts.driver
    return bool(
        driver
        and not driver.module_loaded
        and driver.module_for_kernel is False
        and driver.dkms_builds
        and not in_container(facts)
    )


def rebuild_fix(facts: HostFacts) -> str:
    """Headers for the running kernel, a DKMS build for it, then load the module."""
    kernel = facts.os.kernel if facts.os and facts.os.kernel else None
    rpm = facts.os is not None and facts.os.id in RPM_FAMILY
    package = f"kernel-devel-{kernel}" if rpm else f"linux-headers-{kernel}"
    named = shlex.quote(package) if kernel else ('"kernel-devel-$(uname -r)"' if rpm
                                                 else '"linux-headers-$(uname -r)"')  # fmt: skip
    install = "sudo dnf install -y" if rpm else "sudo apt-get install -y"
    return f"{install} {named} && sudo dkms autoinstall && sudo modprobe neuron"


def check_dkms_kernel(facts: HostFacts, ctx: Context) -> Verdict:
    """``driver.dkms-kernel``: when the module is not loaded, a build of it exists for the running
    kernel (a neuron.ko* in /lib/modules/<uname -r>, or DKMS's tree names that kernel)."""
    assert facts.driver is not None
    driver = facts.driver
    kernel = (facts.os.kernel if facts.os else None) or "the running kernel"
    if driver.module_loaded:
        return ok("The module is loaded: it was built for the running kernel")
    if in_container(facts) or image_based(facts):
        return skip("The driver is built with the host's image; no DKMS tree here to judge")
    if driver.module_for_kernel:
        return ok(f"neuron.ko is installed for {kernel}, though not loaded")
    if driver.dkms_builds is None:
        return skip("DKMS builds were not collected (a snapshot from an older neuron-env)")
    if not driver.dkms_builds:
        return skip(f"No aws-neuronx DKMS build and no neuron.ko for {kernel} (see driver.module)")
    built = sorted({b.kernel for b in driver.dkms_builds})
    versions = sorted({b.version for b in driver.dkms_builds})
    return fail(
        f"The running kernel {kernel} has no Neuron module: DKMS built aws-neuronx "
        f"{join_words(versions)} for {join_words(built)} only",
        fix=rebuild_fix(facts),
        detail="A kernel update and reboot without headers for the new kernel leaves DKMS "
        "unable to build the driver for it.",
    )
