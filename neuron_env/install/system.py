"""System packages (driver, runtime, collectives, tools) from the Neuron apt repository.

:func:`apt_steps` is pure: the release's ``[apt]`` and ``[system-packages]`` plus the host's
codename and kernel become a list of steps, each an argument list or a file to write. Versions the
matrix does not confirm are left unpinned with a warning, never invented. :func:`execute_steps`
runs them (as root only) through the subprocess gateway.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from neuron_env.command import clean_env, run
from neuron_env.errors import BadInput
from neuron_env.frozen import frozen
from neuron_env.input_files import MiB
from neuron_env.install.outcome import Step, SystemPlan
from neuron_env.invocation import command
from neuron_env.matrix import Note, Release
from neuron_env.probe.os_release import parse_os_release
from neuron_env.probe.sysroot import Sysroot

SOURCES_LIST = "/etc/apt/sources.list.d/neuron.list"
NEURON_BIN = "/opt/aws/neuron/bin"
APT_TIMEOUT = 1800.0
MAX_OS_RELEASE = 1 * MiB
#: Codenames of the Ubuntu releases the matrices list, for steps printed for another host.
KNOWN_CODENAMES = {"ubuntu-22.04": "jammy", "ubuntu-24.04": "noble", "ubuntu-26.04": "resolute"}


@frozen
class HostRelease:
    """What the steps need to know about the host: its OS key, codename and kernel."""

    os: str
    codename: str | None
    kernel: str


def read_host_release(sysroot: Path, kernel: str) -> HostRelease:
    """The OS key and codename from ``/etc/os-release`` under ``sysroot``."""
    root = Sysroot.at(sysroot)
    values = parse_os_release(
        root.file_text("etc/os-release") or root.file_text("usr/lib/os-release")
    )
    key = f"{values.get('ID', 'unknown')}-{values.get('VERSION_ID', '')}".rstrip("-")
    return HostRelease(key, values.get("VERSION_CODENAME") or None, kernel)


def apt_steps(release: Release, host: HostRelease, os_key: str | None = None) -> SystemPlan:
    """The steps that install the release's system packages on an Ubuntu host."""
    os_key = os_key or host.os
    if not os_key.startswith("ubuntu-"):
        raise BadInput(
            f"The Neuron system packages come from an apt repository for Ubuntu; this host is "
            f"'{os_key}'.",
            hint=f"Print the steps for an Ubuntu host with '{_for_ubuntu(release)}', and run "
            "them there.",
        )
    codename = _codename(os_key, host, str(release.version))
    packages, notes = _package_args(release)
    apt = release.apt
    key_file = str(Path(apt.keyring).with_suffix(".asc"))
    steps = (
        Step("Refresh the package lists", ("apt-get", "update")),
        Step(
            "Install what the key download needs", _apt_install("ca-certificates", "curl", "gnupg")
        ),
        Step(
            "Download the Neuron repository key",
            ("curl", "-fsSL", "--create-dirs", "-o", key_file, apt.key_url),
        ),
        Step(
            "Convert the key to a keyring",
            ("gpg", "--dearmor", "--yes", "-o", apt.keyring, key_file),
        ),
        Step(
            "Add the Neuron apt repository",
            write=SOURCES_LIST,
            content=f"deb [signed-by={apt.keyring}] {apt.url} {codename} main\n",
        ),
        Step("Refresh the package lists", ("apt-get", "update")),
        _headers_step(host if os_key == host.os else None),
        Step(f"Install the Neuron {release.version} system packages", _apt_install(*packages)),
    )
    notes.append(
        Note("info", "system.path", f"The Neuron tools install to {NEURON_BIN}: add it to PATH.")
    )
    if os_key != host.os:
        notes.append(Note("warning", "system.other-host", OTHER_HOST))
    kernel = host.kernel if os_key == host.os else "$(uname -r)"
    return SystemPlan(str(release.version), os_key, codename, kernel, steps, tuple(notes))


OTHER_HOST = (
    "These steps are for another host: run them there (the kernel headers step asks that "
    "host's shell for its kernel); --execute runs only on the host itself."
)


def _headers_step(host: HostRelease | None) -> Step:
    """The kernel headers for this host's kernel, or, for another host, its shell's answer."""
    summary = "Install the kernel headers the driver builds against"
    if host is not None:
        return Step(summary, _apt_install(f"linux-headers-{host.kernel}"))
    return Step(summary, _apt_install('"linux-headers-$(uname -r)"'), runnable=False)


def _unpinned_note(release: Release, names: list[str]) -> Note:
    return Note(
        "warning",
        "system.unpinned",
        f"Neuron {release.version} does not confirm the versions of {', '.join(names)}: they are "
        "installed unpinned (the newest in the repository).",
    )


def _for_ubuntu(release: Release) -> str:
    """``install --system`` for the release's newest Ubuntu, to print its steps on any host."""
    ubuntu = max((k for k in release.os if k.startswith("ubuntu-")), default="ubuntu-24.04")
    return command("install", "--system", "--release", str(release.version), "--os", ubuntu)


def _codename(os_key: str, host: HostRelease, release: str) -> str:
    if os_key == host.os and host.codename:
        return host.codename
    known = KNOWN_CODENAMES.get(os_key)
    if known is None:
        raise BadInput(
            f"Cannot tell the codename of {os_key} on this host ({host.os}).",
            hint=f"Run '{command('install', '--system', '--release', release)}' on that host "
            "itself.",
        )
    return known


def _apt_install(*packages: str) -> tuple[str, ...]:
    return ("apt-get", "install", "-y", *packages)


def _package_args(release: Release) -> tuple[list[str], list[Note]]:
    args: list[str] = []
    notes: list[Note] = []
    for name, pkg in sorted(release.system_packages.items()):
        pinned = f"{name}={pkg.version}*" if pkg.version is not None and pkg.confirmed else name
        if pkg.required:
            args.append(pinned)
        else:
            role = "for containers" if pkg.role == "oci-hook" else pkg.role
            notes.append(Note("info", "system.optional", f"Optional: {pinned} ({role})."))
    unpinned = [a for a in args if "=" not in a]
    if unpinned:
        notes.insert(0, _unpinned_note(release, unpinned))
    return args, notes


def execute_steps(
    plan: SystemPlan,
    *,
    log: Path,
    sysroot: Path = Path("/"),
    progress: Callable[[str], None] = lambda _: None,
) -> None:
    """Run the steps in order, as root; the first failure stops them."""
    require_root(plan)
    check_runnable(plan)
    env = clean_env({"DEBIAN_FRONTEND": "noninteractive"})
    for step in plan.steps:
        progress(step.summary)
        if step.write is not None:
            path = Sysroot.at(sysroot).resolve(step.write)  # where the host's own links lead
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(step.content, encoding="utf-8")
        else:
            run(list(step.argv), timeout=APT_TIMEOUT, env=env, output=log)


def require_root(plan: SystemPlan) -> None:
    """Refuse, before anything runs, unless neuron-env runs as root."""
    if os.geteuid() != 0:
        # By its path: sudo's secure_path never holds the venv's bin.
        again = command("install", "--system", "--release", plan.release, "--execute")
        raise BadInput(
            "--execute changes the system and needs root; nothing was run.",
            hint=f"Run it as root: sudo {again}",
        )


def check_runnable(plan: SystemPlan) -> None:
    """Refuse to run steps that were printed for another host."""
    if not all(step.runnable for step in plan.steps):
        there = command("install", "--system", "--release", plan.release, "--execute")
        raise BadInput(OTHER_HOST, hint=f"Run '{there}' there.")
