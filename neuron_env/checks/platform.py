"""Platform checks: OS release, CPU architecture, Python version, EC2 instance type."""

from __future__ import annotations

import shlex

from neuron_env.checks.device_identity import DriverIdentity, driver_identity
from neuron_env.checks.legacy_host import not_for_this_host
from neuron_env.checks.model import Context, Verdict, fail, not_compared, ok, warn
from neuron_env.checks.versions import loose_version
from neuron_env.facts import IMDS_FORBIDDEN, HostFacts, OsFacts, PythonFacts
from neuron_env.matrix.model import OsRelease, Release
from neuron_env.wording import version_span

HOP_LIMIT_HINT = (
    "If this is one, in a container: IMDSv2 needs a hop limit of 2: "
    "aws ec2 modify-instance-metadata-options "
    "--instance-id ID --http-put-response-hop-limit 2 --http-tokens required"
)


def check_os(facts: HostFacts, ctx: Context) -> Verdict:
    """``platform.os``: an OS release the release supports, with pip wheels and a new enough
    glibc."""
    assert facts.os is not None
    release, os_facts = ctx.release, facts.os
    name = os_facts.pretty_name or os_facts.key or "this OS"
    if ctx.legacy_family:
        return not_for_this_host(name, ctx)
    glibc = _glibc_problem(ctx, os_facts)
    if glibc:
        return glibc
    if not release.os:
        return not_compared(f"Neuron {release.version} lists no OS releases ({name} here)")
    entry = release.os.get(os_facts.key or "")
    if entry is None:
        here = (
            f"; or, unsupported, on this host: '{ctx.install_command()}' (installs the manylinux "
            "wheels anyway)"
            if ctx.unlisted_os
            else ""
        )
        return fail(
            f"{name} is not an OS that Neuron {release.version} supports for TorchNeuron",
            fix=f"Use {_wheel_oses(release)} (pip wheels), e.g. the Neuron Base DLAMI, "
            f"and run '{ctx.install_command(here=False)}' there{here}.",
            detail=f"Known OS releases: {', '.join(sorted(release.os))}.",
        )
    return _judge_os_entry(facts, release, entry)


def _judge_os_entry(facts: HostFacts, release: Release, entry: OsRelease) -> Verdict:
    unconfirmed = "" if entry.confirmed else f" (unconfirmed: {entry.note})"
    if entry.support == "unsupported":
        return fail(f"{entry.name} is not supported by Neuron {release.version}", fix=entry.instead)
    if entry.support != "supported":
        status = entry.support.replace("-", " ")
        return warn(f"{entry.name}: support is {status} in Neuron {release.version}", entry.instead)
    if not entry.wheels:
        if _native_installed(facts, release):
            return ok(
                f"{entry.name}: supported; no pip wheels in {release.version}, but TorchNeuron is "
                "installed (DLAMI or source build)"
            )
        return warn(
            f"{entry.name} is supported, but Neuron {release.version} publishes no torch-neuronx "
            "pip wheels for it",
            fix=entry.instead,
            detail=unconfirmed.strip(),
        )
    return ok(f"{entry.name}: supported, pip wheels available{unconfirmed}")


def _glibc_problem(ctx: Context, os_facts: OsFacts) -> Verdict | None:
    release = ctx.release
    have, need = loose_version(os_facts.glibc), loose_version(release.release.min_glibc)
    if have is None or need is None or have >= need:
        return None
    return fail(
        f"glibc {os_facts.glibc} is older than the {release.release.min_glibc} that PyTorch needs",
        fix=f"Use {_wheel_oses(release)}; see "
        f"'{ctx.program} matrix show --release {release.version}'.",
    )


def _native_installed(facts: HostFacts, release: Release) -> bool:
    dist = facts.python.dist("torch-neuronx") if facts.python else None
    version = loose_version(dist.version) if dist else None
    return version is not None and version not in release.legacy_xla.versions


def _wheel_oses(release: Release) -> str:
    names = [entry.name for entry in release.os.values() if entry.wheels]
    return " or ".join(names) or "a supported OS"


def check_arch(facts: HostFacts, ctx: Context) -> Verdict:
    """``platform.arch``: a CPU architecture TorchNeuron runs on (Linux x86_64)."""
    assert facts.os is not None
    arch, supported = facts.os.arch or "unknown", ctx.release.release.arch
    if not supported:
        return not_compared(f"Neuron {ctx.release.version} lists no CPU architecture ({arch} here)")
    if arch in supported:
        return ok(f"{arch}")
    return fail(
        f"{arch}: TorchNeuron runs on Linux {' and '.join(supported)} only",
        fix="Run on a Trn2 or Trn3 instance (x86_64).",
    )


def check_python(facts: HostFacts, ctx: Context) -> Verdict:
    """``platform.python``: the target Python is one the torch-neuronx pairing (or, without one, any
    of the release's pairings) supports."""
    assert facts.python is not None
    python = facts.python
    swapped = _swapped_under_the_venv(python, ctx)
    if swapped is not None:
        return swapped
    if ctx.legacy_family:
        return not_for_this_host(f"Python {python.version}", ctx)
    supported = ctx.pairing.python if ctx.pairing else _all_pythons(ctx.release)
    where = f"torch-neuronx {ctx.pairing.torch_neuronx}" if ctx.pairing else "TorchNeuron"
    if not supported:
        return not_compared(
            f"Neuron {ctx.release.version} lists no Python versions for {where} "
            f"(Python {python.version} here)"
        )
    if python.minor in supported:
        return ok(f"Python {python.version} ({python.executable})")
    return fail(
        f"Python {python.version} is not supported by {where} (needs {version_span(supported)})",
        fix=ctx.install_command(),  # creates an environment with a supported Python first
        detail=f"Target interpreter: {python.executable}",
    )


def _swapped_under_the_venv(python: PythonFacts, ctx: Context) -> Verdict | None:
    """A venv made with one Python whose interpreter now runs another: its ``bin/python`` links
    to ``/usr/bin/python3``, which an OS release upgrade moved from 3.12 to 3.14. The new Python
    does not look in ``lib/python3.12/site-packages``: every package the venv had is gone from
    its view, and installing into it would mix two Pythons' folders."""
    made = python.venv_version
    if not made or ".".join(made.split(".")[:2]) == python.minor:
        return None
    made_minor = ".".join(made.split(".")[:2])
    venv = shlex.quote(python.prefix)
    install = ctx.install_command()
    fix = install if ctx.new_env else f"rm -rf {venv} && {install}"
    return fail(
        f"{python.prefix} was made with Python {made} but its python now runs {python.version}: "
        "the interpreter it links to was upgraded under it (an OS release upgrade), and its "
        f"packages in lib/python{made_minor}/site-packages are not seen",
        fix=fix,
        detail=f"pyvenv.cfg records version {made}; {python.executable} is Python "
        f"{python.version}. The fix removes the environment and makes it anew.",
    )


def _all_pythons(release: Release) -> tuple[str, ...]:
    found = {py for pairing in release.pairings for py in pairing.python}
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))


def check_instance(facts: HostFacts, ctx: Context) -> Verdict:
    """``platform.instance``: a Trn2/Trn3 EC2 instance, from IMDS or else the driver's sysfs
    (which names the family, never the size)."""
    assert facts.ec2 is not None
    ec2 = facts.ec2
    if ec2.instance_type:
        return _judge_instance_type(ctx.release, ec2.instance_type, "")
    identity = driver_identity(facts)
    if identity is None:
        return _unknown_instance(facts)
    return _judge_driver_identity(ctx.release, identity, ec2.reason or "no IMDS")


def _judge_driver_identity(release: Release, identity: DriverIdentity, reason: str) -> Verdict:
    """The family the driver names, judged like a type of it; the size stays unknown."""
    source = f"from the Neuron driver's sysfs; size unknown: {reason}"
    family = release.families.get(identity.family or "")
    if family is None:
        return warn(
            f"The Neuron driver reports {identity.describe()}, a spelling neuron-env does not "
            f"know; the instance family is not judged ({reason})",
            fix=f"Run where IMDS answers, or compare with 'neuron-ls'. {HOP_LIMIT_HINT}",
        )
    if not family.native:  # no fix: the report says once what runs here, and judges it
        return fail(f"{identity.describe()} ({source}): {family.reason}",
                    detail=NOT_NATIVE_DETAIL)  # fmt: skip
    return ok(f"{identity.describe()} ({source})")


NOT_NATIVE_DETAIL = (
    "TorchNeuron needs a Trn2 or Trn3 instance; the other checks judge the environment that runs "
    "on this one."
)


def _unknown_instance(facts: HostFacts) -> Verdict:
    assert facts.ec2 is not None
    if "AWS_EC2_METADATA_DISABLED" in facts.ec2.reason:
        return warn(
            f"Instance type unknown: {facts.ec2.reason}", fix="Unset AWS_EC2_METADATA_DISABLED."
        )
    in_container = bool(facts.os and facts.os.container)
    if facts.ec2.reason.startswith(IMDS_FORBIDDEN):
        return fail(f"Instance type unknown: {facts.ec2.reason}", fix=_forbidden_fix(in_container))
    fix = "Run on a Trn2 or Trn3 instance, e.g. trn2.48xlarge."
    return fail(
        f"Not an EC2 instance ({facts.ec2.reason or 'no instance metadata'})",
        fix=f"{fix} {HOP_LIMIT_HINT}" if in_container else fix,
    )


def _forbidden_fix(in_container: bool) -> str:
    """Turn instance metadata on (IMDSv2 only); a container needs a hop limit of 2 as well."""
    hops = " --http-put-response-hop-limit 2" if in_container else ""
    return (
        "Turn instance metadata on for this instance: aws ec2 modify-instance-metadata-options "
        f"--instance-id ID --http-endpoint enabled --http-tokens required{hops}"
    )


def _judge_instance_type(release: Release, instance_type: str, source: str) -> Verdict:
    family_name = release.family_of(instance_type)
    family = release.families.get(family_name)
    if family is None:
        return fail(
            f"{instance_type} is not a Trainium instance{source}",
            fix="TorchNeuron runs on Trn2 and Trn3 instances, e.g. trn2.48xlarge.",
        )
    if not family.native:  # no fix: the report says once what runs here, and judges it
        return fail(
            f"{instance_type}: {family.reason}",
            detail=NOT_NATIVE_DETAIL,
        )
    if instance_type not in release.instance_types:
        return warn(
            f"{instance_type}: family {family_name} is supported; this type is not in the matrix",
            fix=family.note or "Add it to a matrix file with --matrix-dir.",
        )
    return ok(f"{instance_type}{source}")
