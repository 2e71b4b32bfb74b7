"""What the user gives ``image render``: the base image and the packages, checked (pure).

The packages are judged by ``install``'s own policy (:mod:`neuron_env.install.user_policy`): a
Neuron name the release does not ship, the legacy PyTorch/XLA stack and upstream twins (torchao
beside TorchAO Neuron) are refused as ``install`` refuses them; a pin of the release or a
companion comes only through the image's ``neuron-env install``; everything else must be pinned
exactly. A base whose tag names an Ubuntu release must be the image's OS.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.install.user_packages import UserRequirement
from neuron_env.install.user_policy import judge
from neuron_env.matrix import Matrix, Release, Target
from neuron_env.templating import is_image_reference

# Ubuntu's codenames: the Neuron apt repository is laid out by them.
CODENAMES = {"ubuntu-22.04": "jammy", "ubuntu-24.04": "noble", "ubuntu-26.04": "resolute"}
VENV = "/opt/venv"
MAX_PACKAGES = 200
MAX_REQUIREMENTS_BYTES = 256 * 1024
# What a user package may look like once parsed: a name, extras, a version pin, a marker.
_PACKAGE_TEXT = re.compile(r"[A-Za-z0-9._\-\[\],=<>!~;'\" ()]{1,300}")


def base_image(base: str | None, os_id: str) -> str:
    """``ubuntu:26.04`` for ubuntu-26.04, or the user's ``--base``, checked as a reference."""
    if base is None:
        return "ubuntu:" + os_id.removeprefix("ubuntu-")
    if is_image_reference(base):
        return base
    raise BadInput(
        f"--base {_shown(base)} is not an image reference: use [REGISTRY/]NAME[:TAG][@sha256:"
        "DIGEST] in lowercase, e.g. ubuntu:26.04 or public.ecr.aws/ubuntu/ubuntu:26.04, without "
        "spaces, quotes or '$'."
    )


def user_packages(packages: Iterable[str], matrix: Matrix, target: Target) -> tuple[str, ...]:
    """The user's packages, each one pinned requirement, judged by install's own policy."""
    checked = []
    for text in packages:
        checked.append(_user_package(text.strip(), matrix, target))
        if len(checked) > MAX_PACKAGES:
            raise BadInput(f"More than {MAX_PACKAGES} packages: put them in an image of your own.")
    return tuple(checked)


def read_requirements(path: Path) -> list[str]:
    """The requirement lines of a ``-r`` file; options (indexes, ``-e``, nested files) refused."""
    from neuron_env.input_files import InputRejected, read_text

    try:  # the one bounded reader: regular files only, never blocked on, size-capped, UTF-8
        text = read_text(path, MAX_REQUIREMENTS_BYTES)
    except InputRejected as exc:
        raise BadInput(f"Cannot read -r {path}: {exc}.") from None
    lines = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("-"):
            raise BadInput(
                f"-r {path}, line {number}: {_shown(line)} is a pip option; the image takes "
                "requirements only (its indexes are the matrix's, and nothing else is read).",
                hint="Keep only lines like 'transformers==4.57.1'.",
            )
        lines.append(line)
    return lines


def _user_package(text: str, matrix: Matrix, target: Target) -> str:
    if not _PACKAGE_TEXT.fullmatch(text):
        raise BadInput(
            f"Package {_shown(text)} is not a requirement neuron-env can put in an image: use "
            "NAME==VERSION (extras and markers allowed), without '$', backticks, newlines or URLs."
        )
    try:
        requirement = Requirement(text)
    except InvalidRequirement as exc:
        raise BadInput(f"Package {_shown(text)} is not a valid requirement: {exc}.") from None
    release = matrix.get(target.release)
    # install's policy first: legacy stack, upstream twins, Neuron names it does not ship.
    judged = judge(matrix, release, target, UserRequirement(text, "image render"))
    if judged.kind != "default":
        raise _from_the_matrix(requirement.name, judged.kind, target)
    exact = [s for s in requirement.specifier if s.operator == "==" and "*" not in s.version]
    if requirement.url or not exact:
        raise BadInput(
            f"Package {_shown(text)} names no exact version: an image pins what it installs.",
            hint=f"Give {requirement.name}==VERSION (pip index versions {requirement.name}).",
        )
    return str(requirement)


def _from_the_matrix(name: str, kind: str, target: Target) -> BadInput:
    """A pin of the release or a companion: only the image's 'neuron-env install' may bring it."""
    if kind == "pinned":
        return BadInput(
            f"{name} comes from the matrix's indexes through 'neuron-env install' (Neuron "
            f"{target.release} pins it): it cannot be added as a package of yours.",
            hint="Leave it out; the image already holds the release's version.",
        )
    return BadInput(
        f"{name} is a Neuron companion: it comes from the matrix's indexes through 'neuron-env "
        "install', and image render installs the release's own pins only.",
        hint=f"Leave it out, and in a RUN step of your own add it with 'neuron-env install "
        f"--torch {target.torch} --release {target.release} --venv {VENV} --yes {name}'.",
    )


def require_base_os(release: Release, base: str | None, os_id: str) -> None:
    """A ``--base`` whose tag names an Ubuntu release is refused unless it is ``os_id``'s.

    The Neuron apt repository and the pip wheels are built for ``os_id``; a base of another
    Ubuntu (``ubuntu:22.04``, which has no wheels) would build an image that cannot work. A
    base whose OS cannot be told from its name keeps the note that says what it must be.
    """
    named = base_os(base) if base is not None else None
    if named is None or named == os_id:
        return
    entry = release.os.get(named)
    why = (
        f"Neuron {release.version} publishes no torch-neuronx pip wheels for {entry.name}"
        if entry is not None and not (entry.wheels and entry.support == "supported")
        else f"the image is built for {os_id}"
    )
    raise UnsupportedCombination(
        f"--base {_shown(str(base))} is {named}, and {why}: the image's Neuron packages and "
        f"pip wheels are {os_id}'s.",
        hint=f"Use a base of {os_id} (e.g. ubuntu:{os_id.removeprefix('ubuntu-')}), or the "
        f"matching --os{'' if entry is None else ' with wheels'}.",
    )


_BASE_UBUNTU = re.compile(r"(?:.*/)?ubuntu:(?P<tag>[a-z0-9._-]+)(?:@sha256:[0-9a-f]{64})?")


def base_os(base: str) -> str | None:
    """``ubuntu-22.04`` for ``ubuntu:22.04`` or ``…/ubuntu:jammy-20250101``; None: not told."""
    match = _BASE_UBUNTU.fullmatch(base)
    if match is None:
        return None
    tag = match["tag"]
    for os_id, codename in CODENAMES.items():
        version = os_id.removeprefix("ubuntu-")
        if tag in (version, codename) or tag.startswith((f"{version}-", f"{codename}-")):
            return os_id
    numbered = re.match(r"\d{2}\.\d{2}", tag)
    return f"ubuntu-{numbered.group(0)}" if numbered else None


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 80 else repr(value[:77] + "...")
