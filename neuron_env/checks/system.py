"""System package checks: the release's apt packages and the kernel headers DKMS needs."""

from __future__ import annotations

import shlex

from neuron_env.checks.baseline import Comparison, compare_system_package
from neuron_env.checks.host_kind import apt_elsewhere, apt_step
from neuron_env.checks.model import Context, Verdict, fail, not_compared, ok, skip, warn
from neuron_env.facts import HostFacts
from neuron_env.wording import join_words, plural

# Inside a container the driver and its tools live on the host; only user-space packages matter.
HOST_ONLY = {"aws-neuronx-dkms", "aws-neuronx-tools", "aws-neuronx-oci-hook"}
LEGACY_PREFIX = "aws-neuron-"  # Inf1-era apt packages; the current ones are aws-neuronx-*


def check_packages(facts: HostFacts, ctx: Context) -> Verdict:
    """``system.packages``: the release's aws-neuronx-* apt packages and the kernel headers DKMS
    needs (host-only packages are not asked of a container; without dpkg: skipped)."""
    assert facts.system is not None
    installed = facts.system.packages
    if not installed and facts.os is not None and facts.os.id not in ("ubuntu", "debian"):
        return skip(f"No dpkg database on {facts.os.pretty_name or facts.os.id}; not inspected")
    legacy = None if ctx.legacy_family == "Inf1" else _legacy_packages(installed)
    if legacy:
        return legacy
    in_container = bool(facts.os and facts.os.container)
    wanted = {
        name: pkg
        for name, pkg in ctx.release.system_packages.items()
        if pkg.required and not (in_container and name in HOST_ONLY)
    }
    if not wanted:
        return not_compared(f"Neuron {ctx.release.version} lists no Neuron system packages")
    missing = [name for name in wanted if name not in installed]
    found = [compare_system_package(ctx, n, installed[n]) for n in wanted if n in installed]
    if missing:
        old = [c for c in found if c.too_old or c.behind]
        also = f"; too old: {', '.join(f'{c.name} {c.installed}' for c in old)}" if old else ""
        return fail(
            f"Missing Neuron system packages: {', '.join(missing)}{also}",
            fix=_apt_install(facts, [*missing, *(c.name for c in old)], ctx),
            detail=_system_steps(facts, ctx),
        )
    return _judge_versions(facts, ctx, found)


def _judge_versions(facts: HostFacts, ctx: Context, found: list[Comparison]) -> Verdict:
    """Too old (older than an earlier release shipped) fails; behind the release's own version
    warns; a package no release up to this one lists a version of is not compared."""
    release = ctx.release.version
    too_old = [c for c in found if c.too_old]
    if too_old:
        return fail(
            f"Too old for Neuron {release}: {', '.join(c.too_old_words() for c in too_old)}",
            fix=_apt_install(facts, [c.name for c in too_old], ctx),
            detail=_unlisted_note(ctx, too_old),
        )
    headers = _headers_problem(facts)
    stale = [c for c in found if c.behind]
    if stale:
        listed = ", ".join(
            f"{c.name} {c.installed} (Neuron {release}: {c.own.version if c.own else ''})"
            for c in stale
        )
        names = [c.name for c in stale]
        return warn(f"Older than Neuron {release}: {listed}", fix=_apt_install(facts, names, ctx))
    if headers:
        return headers
    uncompared = [c.name for c in found if not c.compared]
    if uncompared:
        return not_compared(
            f"Neuron {release} lists no version of {join_words(uncompared)}, and no earlier "
            "release neuron-env knows does",
            detail="Installed: " + ", ".join(f"{c.name} {c.installed}" for c in found),
        )
    return ok(_ok_words(ctx, found))


def _ok_words(ctx: Context, found: list[Comparison]) -> str:
    release = ctx.release.version
    borrowed = sorted({c.earlier.release for c in found if c.own is None and c.earlier})
    packages = plural(len(found), "Neuron system package")
    if not borrowed:
        return f"{packages} at Neuron {release} versions or newer"
    unlisted = [c.name for c in found if c.own is None]
    which = "any of them" if len(unlisted) == len(found) else join_words(unlisted)
    return (
        f"{packages} at Neuron {join_words(str(v) for v in borrowed)} versions or newer "
        f"(Neuron {release} lists no version of {which}: compared with the newest release "
        "that does)"
    )


def _unlisted_note(ctx: Context, found: list[Comparison]) -> str:
    unlisted = [c.name for c in found if c.own is None]
    if not unlisted:
        return ""
    return (
        f"Neuron {ctx.release.version} lists no version of {join_words(unlisted)}: each was "
        "compared with the newest earlier release that does; apt installs the newest from the "
        "Neuron repository."
    )


def _apt_install(facts: HostFacts, names: list[str], ctx: Context) -> str:
    return apt_step(facts, "sudo apt-get install -y " + " ".join(_apt_pin(n, ctx) for n in names))


def _legacy_packages(installed: dict[str, str]) -> Verdict | None:
    """Inf1-era ``aws-neuron-*`` packages (the current ones are ``aws-neuronx-*``): their driver
    and runtime clash with the current ones over the same device and library names."""
    legacy = sorted(name for name in installed if name.startswith(LEGACY_PREFIX))
    if not legacy:
        return None
    shown = ", ".join(f"{name} {installed[name]}" for name in legacy)
    return fail(
        f"Inf1-era Neuron packages are installed: {shown}",
        fix="sudo apt-get remove -y " + " ".join(shlex.quote(name) for name in legacy),
        detail="They belong to the first Neuron SDK (Inf1), replaced by the aws-neuronx-* "
        "packages; run doctor again after removing them.",
    )


def _apt_pin(name: str, ctx: Context) -> str:
    pkg = ctx.release.system_packages[name]
    return shlex.quote(f"{name}={pkg.version}*") if pkg.version else name


def _system_steps(facts: HostFacts, ctx: Context) -> str:
    """Where install prints the apt steps: here on Ubuntu, else for an Ubuntu host."""
    steps = f"{ctx.program} install --system --torch {_torch(ctx)} --release {ctx.release.version}"
    if apt_elsewhere(facts):
        ubuntu = max((k for k in ctx.release.os if k.startswith("ubuntu-")), default="")
        where = f" --os {ubuntu}" if ubuntu else ""
        return f"On an Ubuntu host, '{steps}{where}' prints every apt step to run there."
    return f"'{steps}' prints every apt step (repository, key, pins)."


def _torch(ctx: Context) -> str:
    return ctx.pairing.torch_minor if ctx.pairing else ctx.release.pairings[-1].torch_minor


def _headers_problem(facts: HostFacts) -> Verdict | None:
    assert facts.system is not None
    if facts.system.kernel_headers is False and not (facts.os and facts.os.container):
        kernel = facts.os.kernel if facts.os and facts.os.kernel else None
        package = (
            shlex.quote(f"linux-headers-{kernel}") if kernel else '"linux-headers-$(uname -r)"'
        )
        return warn(
            f"linux-headers-{kernel or '(this kernel)'} is not installed: the driver (DKMS) "
            "cannot be rebuilt after a kernel update",
            fix=apt_step(facts, f"sudo apt-get install -y {package}"),
        )
    return None
