"""System package checks: the release's apt packages and the kernel headers DKMS needs."""

from __future__ import annotations

import shlex

from neuron_env.checks.model import Context, Verdict, fail, ok, skip, warn
from neuron_env.checks.versions import loose_version, older
from neuron_env.facts import HostFacts

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
    legacy = _legacy_packages(installed)
    if legacy:
        return legacy
    in_container = bool(facts.os and facts.os.container)
    wanted = {
        name: pkg
        for name, pkg in ctx.release.system_packages.items()
        if pkg.required and not (in_container and name in HOST_ONLY)
    }
    missing = [name for name in wanted if name not in installed]
    stale = [
        (name, installed[name], str(pkg.version))
        for name, pkg in wanted.items()
        if name in installed and pkg.version and _is_older(installed[name], pkg.version)
    ]
    pins = [_apt_pin(name, ctx) for name in [*missing, *(s[0] for s in stale)]]
    if missing:
        return fail(
            f"Missing Neuron system packages: {', '.join(missing)}",
            fix="sudo apt-get install -y " + " ".join(pins),
            detail=f"'{ctx.program} install --system --torch {_torch(ctx)} --release "
            f"{ctx.release.version}' prints every apt step (repository, key, pins).",
        )
    headers = _headers_problem(facts)
    if stale:
        listed = ", ".join(
            f"{n} {have} (Neuron {ctx.release.version}: {want})" for n, have, want in stale
        )
        return warn(
            f"Older than Neuron {ctx.release.version}: {listed}",
            fix="sudo apt-get install -y " + " ".join(pins),
        )
    if headers:
        return headers
    return ok(
        f"{len(wanted)} Neuron system packages at Neuron {ctx.release.version} versions or newer"
    )


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


def _is_older(installed: str, wanted: object) -> bool:
    have, want = loose_version(installed), loose_version(str(wanted))
    return have is not None and want is not None and older(have, want)


def _apt_pin(name: str, ctx: Context) -> str:
    pkg = ctx.release.system_packages[name]
    return shlex.quote(f"{name}={pkg.version}*") if pkg.version else name


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
            fix=f"sudo apt-get install -y {package}",
        )
    return None
