"""Installing on a host whose OS the release does not list at all (Debian 12, say).

``install`` refuses it, naming the supported ways (a Neuron DLAMI, a container image from
``neuron-env image render``, a listed host), unless ``--allow-unlisted-os`` asks to install the
manylinux wheels anyway, which it then does with a warning. It never answers with an ``--os``
that would pretend the host is another OS; doctor's install commands there carry the flag.
"""

from __future__ import annotations

from neuron_env.checks.model import ALLOW_UNLISTED_OS
from neuron_env.errors import UnsupportedCombination
from neuron_env.facts import OsFacts
from neuron_env.install.request import InstallRequest
from neuron_env.invocation import command
from neuron_env.matrix import Release
from neuron_env.wording import join_words


def unlisted_host_os(release: Release, request: InstallRequest, os_facts: OsFacts) -> str:
    """On a host whose OS the release does not list (Debian 12, say), the warning an install
    with ``--allow-unlisted-os`` carries; "" on a listed OS, or with ``--os``, which names
    another host. Without that flag such an install is refused (:func:`unlisted_os_refusal`).

    TorchNeuron's wheels are manylinux ones, so they may well install on a glibc new enough;
    but nobody supports the result, so it takes an explicit opt-in.
    """
    key = os_facts.key
    if request.os or key is None or not release.os or key in release.os:
        return ""
    name = os_facts.pretty_name or key
    listed = join_words([entry.name for entry in release.os.values()])
    return (
        f"{name} is not an OS Neuron {release.version} lists ({listed}): the manylinux "
        "wheels are installed anyway (--allow-unlisted-os), and nobody supports the result."
    )


def unlisted_os_refusal(
    release: Release, request: InstallRequest, os_facts: OsFacts
) -> UnsupportedCombination:
    """The refusal of an OS the release does not list, naming the supported ways and the
    opt-in; never an ``--os`` that would pretend the host is another OS."""
    name = os_facts.pretty_name or os_facts.key or "this OS"
    listed = join_words([entry.name for entry in release.os.values()])
    return UnsupportedCombination(
        f"This host runs {name}, which Neuron {release.version} does not list for "
        f"TorchNeuron (it lists {listed}).",
        hint=f"Supported ways: a Neuron DLAMI ({_dlami_oses(release)}); a container image "
        f"('{_image_command(release, request)}' writes its Dockerfile); or a host of "
        f"{_wheel_oses(release)}. To install the manylinux wheels here anyway, unsupported, "
        f"add {ALLOW_UNLISTED_OS}.",
    )


def _image_command(release: Release, request: InstallRequest) -> str:
    torch = request.torch or release.pairings[-1].torch_minor
    return command("image", "render", "--torch", torch, "--release", str(release.version),
                   "--neuron-env-source", "pypi")  # fmt: skip


def _dlami_oses(release: Release) -> str:
    names = sorted({release.os[d.os].name for d in release.dlamis if d.os in release.os})
    return join_words(names, "or") or "see the Neuron documentation"


def _wheel_oses(release: Release) -> str:
    return join_words([e.name for e in release.os.values() if e.wheels], "or") or "a listed OS"
