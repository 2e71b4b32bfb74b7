"""A container image for Trainium, decided from the matrix: ``neuron-env image render``.

Pure: the request and the matrix become an :class:`ImageSpec`, and ``templates/Dockerfile.j2``
lays it out. What goes in follows the host side of neuron-env, minus what belongs to the host:

* the base for an OS the release ships pip wheels for (refused otherwise, as ``resolve`` says;
  a ``--base`` whose tag names another Ubuntu is refused too);
* the user's packages judged by ``install``'s own policy (:mod:`neuron_env.install.user_policy`:
  Neuron names, the legacy stack, upstream twins such as torchao), then pinned exactly;
* the Neuron apt repository and its key, and the release's user-space packages at its versions
  (runtime, collectives, tools); never the driver (``aws-neuronx-dkms``), which is the host's;
* the EFA user space, its signature checked, installed with ``--skip-kmod``;
* neuron-env itself from a source checked against its sha256 (:mod:`.tool_source`), then the
  Python environment and the user's packages built by one ``neuron-env install`` (the same
  command and code as on a host: each package from its own index, never ``--extra-index-url``,
  and a resolution that takes a Neuron name, even a dependency's, from another index refused);
  no other pip step installs anything into the environment;
* OCI labels with the pins, and a ``HEALTHCHECK`` that runs ``neuron-env preflight --level 0``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import field
from typing import Any

from neuron_env import __version__
from neuron_env.cloud.spec import default_os, resolve_host
from neuron_env.cloud.tool_source import ToolSource, tool_source
from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.frozen import frozen
from neuron_env.image.inputs import (
    CODENAMES,
    VENV,
    base_image,
    require_base_os,
    user_packages,
)
from neuron_env.install.plan import Mirrors
from neuron_env.matrix import Matrix, Note, Release
from neuron_env.matrix.resolve import Pin
from neuron_env.resources import shipped_matrix_dir
from neuron_env.templating import render

USER_SPACE_ROLES = ("runtime", "collectives", "tools")
EFA_INSTALLER_URL = "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz"
TOOL_VENV = "/opt/neuron-env/tool"
DOWNLOAD_DIR = "/tmp/neuron-env"  # noqa: S108 - a build step's scratch folder, removed after

_MIRROR = re.compile(r"https?://[A-Za-z0-9.\-]+(?::\d{1,5})?(?:/[A-Za-z0-9._\-/~%+=]*)?")


@frozen
class ImageRequest:
    """The options of ``neuron-env image render``."""

    torch: str
    release: str | None = None
    os: str | None = None
    base: str | None = None
    packages: tuple[str, ...] = ()
    neuron_env_source: str | None = None
    neuron_env_sha256: str | None = None
    neuron_env_spec: str | None = None
    mirrors: Mirrors = field(default_factory=Mirrors)


@frozen
class AptPackage:
    name: str
    version: str | None  # None where the matrix does not confirm the release's version

    @property
    def argument(self) -> str:
        """``name=version*``: apt versions carry a build suffix (``2.35.33.0-1``)."""
        return self.name if self.version is None else f"{self.name}={self.version}*"


@frozen
class ImageSpec:
    """Everything the Dockerfile holds, decided."""

    release: str
    torch: str
    torch_minor: str
    torch_neuronx: str
    os: str
    codename: str
    base: str
    apt_url: str
    apt_key_url: str
    apt_keyring: str
    system_packages: tuple[AptPackage, ...]
    pins: tuple[Pin, ...]
    tool: ToolSource
    packages: tuple[str, ...] = ()
    mirrors: tuple[tuple[str, str], ...] = ()  # (install option, URL): the user's mirrors
    notes: tuple[Note, ...] = field(default=())

    @property
    def description(self) -> str:
        return f"Neuron {self.release}, PyTorch {self.torch}, {self.os}"


def build_image_spec(matrix: Matrix, request: ImageRequest) -> ImageSpec:
    """Decide the image for ``request``; bad or unsupported input raises BadInput (exit 2)."""
    release, os_id, target, pairing = resolve_host(
        matrix, request.torch, request.release, request.os
    )
    _require_wheels(release, os_id)
    codename = _codename(os_id)
    tool = _tool(request)
    packages = user_packages(request.packages, matrix, target)
    base = base_image(request.base, os_id)
    require_base_os(release, request.base, os_id)
    apt = release.apt
    system = tuple(_user_space(release))
    return ImageSpec(
        release=str(release.version),
        torch=str(pairing.torch),
        torch_minor=pairing.torch_minor,
        torch_neuronx=pairing.torch_neuronx_spec.removeprefix("=="),
        os=os_id,
        codename=codename,
        base=base,
        apt_url=apt.url,
        apt_key_url=apt.key_url,
        apt_keyring=apt.keyring,
        system_packages=system,
        pins=target.pins,
        tool=tool,
        packages=packages,
        mirrors=tuple(_mirrors(request)),
        notes=tuple(_notes(release, target.notes, request, system, tool)),
    )


def render_dockerfile(spec: ImageSpec) -> str:
    """The Dockerfile of ``spec`` (``templates/Dockerfile.j2``)."""
    return render("templates/Dockerfile.j2", dockerfile_context(spec))


def pins_document(spec: ImageSpec) -> dict[str, Any]:
    """The pins the image is built from, for ``--format json``."""
    return {
        "release": spec.release,
        "torch": spec.torch,
        "torch_neuronx": spec.torch_neuronx,
        "os": spec.os,
        "base": spec.base,
        "python": [
            {"name": p.name, "spec": p.spec, "index": p.index, "index_url": p.index_url}
            for p in spec.pins
        ],
        "system": [{"name": p.name, "version": p.version} for p in spec.system_packages],
        "neuron_env": {
            "source": spec.tool.kind,
            "location": spec.tool.location,
            "sha256": spec.tool.sha256,
        },
        "packages": list(spec.packages),
        "mirrors": {
            option.removeprefix("--").replace("-", "_"): url for option, url in spec.mirrors
        },
    }


def dockerfile_context(spec: ImageSpec) -> dict[str, Any]:
    """The template's values: every command an argument list, quoted by the template."""
    efa = "aws-efa-installer-latest.tar.gz"
    return {
        "version": __version__,
        "description": spec.description,
        "warnings": [n.message for n in spec.notes if n.level == "warning"],
        "base": spec.base,
        "labels": _labels(spec),
        "apt_packages": ["ca-certificates", "curl", "gnupg", "python3", "python3-venv"],
        "apt_key_url": spec.apt_key_url,
        "apt_keyring": spec.apt_keyring,
        "apt_keyring_dir": spec.apt_keyring.rsplit("/", 1)[0],
        "apt_source": f"deb [signed-by={spec.apt_keyring}] {spec.apt_url} {spec.codename} main",
        "apt_list": "/etc/apt/sources.list.d/neuron.list",
        "neuron_packages": [p.argument for p in spec.system_packages],
        "efa_url": EFA_INSTALLER_URL,
        "efa_sig_url": EFA_INSTALLER_URL + ".sig",
        "efa_key_url": EFA_INSTALLER_URL.rsplit("/", 1)[0] + "/aws-efa-installer.key",
        "efa_file": efa,
        "tool_commands": list(_tool_commands(spec.tool, _default_index(spec))),
        "install": install_command(spec),
        "healthcheck": preflight_command(spec),
    }


def install_command(spec: ImageSpec) -> list[str]:
    """The image's ``neuron-env install``: the same command, and code, as on a host.

    The user's packages are its arguments, after ``--`` so none is read as an option: install
    resolves them with the release's pins and checks the resolution's routes, so a Neuron name
    pulled in as a dependency fails the build rather than coming from the default index.
    """
    packages = ["--", *spec.packages] if spec.packages else []
    return [
        "neuron-env", "install", "--torch", spec.torch_minor, "--release", spec.release,
        "--venv", VENV, "--python", "/usr/bin/python3", "--yes",
        *(word for mirror in spec.mirrors for word in mirror), *packages,
    ]  # fmt: skip


def preflight_command(spec: ImageSpec) -> list[str]:
    """What the HEALTHCHECK (and a Kubernetes init container) runs inside the image."""
    return [
        "neuron-env", "preflight", "--level", "0", "--release", spec.release,
        "--torch", spec.torch_minor, "--python", f"{VENV}/bin/python",
    ]  # fmt: skip


def _labels(spec: ImageSpec) -> list[tuple[str, str]]:
    python = {p.name: p.spec for p in spec.pins}
    return [
        ("org.opencontainers.image.title", f"TorchNeuron: {spec.description}"),
        (
            "org.opencontainers.image.description",
            f"PyTorch {spec.torch} with torch-neuronx {spec.torch_neuronx} for AWS Trainium, "
            f"Neuron {spec.release} user space (the driver is the host's); rendered by "
            f"neuron-env {__version__}.",
        ),
        ("org.opencontainers.image.base.name", spec.base),
        ("neuron-env.release", spec.release),
        ("neuron-env.os", spec.os),
        ("neuron-env.torch", spec.torch),
        ("neuron-env.torch-neuronx", spec.torch_neuronx),
        *((f"neuron-env.pin.{name}", python[name]) for name in sorted(python)),
        *((f"neuron-env.apt.{p.name}", p.version or "unpinned") for p in spec.system_packages),
        ("neuron-env.healthcheck", " ".join(preflight_command(spec))),
    ]


def _tool_commands(tool: ToolSource, index: list[str]) -> Iterator[list[list[str]]]:
    """neuron-env itself in its own venv: each command a pipeline of argument lists."""
    pip = f"{TOOL_VENV}/bin/pip"
    yield [["python3", "-m", "venv", TOOL_VENV]]
    if tool.kind == "pypi" and tool.sha256 is None:
        yield [[pip, "install", "--no-cache-dir", *index, tool.location]]
    else:
        yield [["install", "-d", "-m", "0700", DOWNLOAD_DIR]]
        if tool.kind == "pypi":
            # The spec is neuron-env==X (checked), whose wheel is pure Python: its name is known.
            version = tool.location.split("==", 1)[1]
            file = f"{DOWNLOAD_DIR}/neuron_env-{version}-py3-none-any.whl"
            yield [[pip, "download", "--no-cache-dir", *index, "--no-deps", "--only-binary=:all:",
                    "--dest", DOWNLOAD_DIR, tool.location]]  # fmt: skip
        else:
            file = f"{DOWNLOAD_DIR}/{tool.file_name}"
            yield [["curl", "-fsSL", "--retry", "3", "--proto", "=https,http",
                    "-o", file, tool.location]]  # fmt: skip
        yield [
            ["printf", "%s  %s\\n", tool.sha256 or "", file],
            ["sha256sum", "--check", "--strict", "-"],
        ]
        if tool.wheelhouse:
            wheels = f"{DOWNLOAD_DIR}/wheels"
            yield [["install", "-d", wheels]]
            yield [["tar", "-xzf", file, "-C", wheels]]
            yield [[pip, "install", "--no-cache-dir", "--no-index", "--find-links", wheels,
                    "neuron-env"]]  # fmt: skip
        else:
            yield [[pip, "install", "--no-cache-dir", *index, file]]
        yield [["rm", "-rf", DOWNLOAD_DIR]]
    yield [["ln", "-s", f"{TOOL_VENV}/bin/neuron-env", "/usr/local/bin/neuron-env"]]


def _default_index(spec: ImageSpec) -> list[str]:
    """``--index-url MIRROR`` for the build's own pip calls, when the user gave a mirror."""
    return [
        word for option, url in spec.mirrors if option == "--index-url" for word in (option, url)
    ]


def _mirrors(request: ImageRequest) -> Iterator[tuple[str, str]]:
    for option, url in request.mirrors.given().items():
        if re.match(r"[A-Za-z]+://[^/]*@", url):
            raise BadInput(
                f"{option} holds credentials: a Dockerfile and its image history keep them.",
                hint="Give the mirror without user:password@, and the credentials at build time "
                "(e.g. a netrc or pip.conf mounted as a build secret).",
            )
        if not _MIRROR.fullmatch(url):
            raise BadInput(
                f"{option} {_shown(url)} is not an index URL neuron-env can put in an image: "
                "use https://HOST[:PORT]/PATH, without spaces, quotes or shell syntax."
            )
        yield option, url


def _tool(request: ImageRequest) -> ToolSource:
    tool = tool_source(
        request.neuron_env_source,
        request.neuron_env_sha256,
        request.neuron_env_spec,
        allow_ami=False,
        allow_s3=False,
    )
    if tool.kind == "s3":
        raise BadInput(
            "--neuron-env-source s3://... needs AWS credentials, which an image build does not "
            "have (and must not keep in a layer).",
            hint="Give an https:// URL with --neuron-env-sha256 (e.g. one from 'aws s3 presign "
            f"{tool.location}'), or pypi.",
        )
    return tool


def _user_space(release: Release) -> Iterator[AptPackage]:
    for name, pkg in sorted(release.system_packages.items()):
        if pkg.role in USER_SPACE_ROLES:
            version = str(pkg.version) if pkg.version is not None and pkg.confirmed else None
            yield AptPackage(name, version)


def _require_wheels(release: Release, os_id: str) -> None:
    from neuron_env.invocation import program
    from neuron_env.matrix.resolve import require_pip_wheels

    building = "an image's Python environment"  # the same rule as install's and download's --os
    require_pip_wheels(release, os_id, building=building, program=program())
    entry = release.os[os_id]  # resolve_target refused an OS the release does not list
    if entry.support != "supported":
        raise UnsupportedCombination(
            f"Neuron {release.version} does not support {entry.name}, so an image cannot build "
            "its Python environment there.",
            hint=f"{entry.instead} For an image, pick an OS with wheels: "
            f"--os {default_os(release)}.",
        )


def _codename(os_id: str) -> str:
    codename = CODENAMES.get(os_id)
    if codename is None:
        raise UnsupportedCombination(
            f"neuron-env builds container images on Ubuntu, from the Neuron apt repository; "
            f"{os_id} is not one of {', '.join(sorted(CODENAMES))}."
        )
    return codename


def _notes(
    release: Release,
    target_notes: tuple[Note, ...],
    request: ImageRequest,
    system: tuple[AptPackage, ...],
    tool: ToolSource,
) -> Iterator[Note]:
    yield from (n for n in target_notes if n.code not in ("python.unspecified", "os.default"))
    yield from tool.notes("The image build")
    unpinned = [p.name for p in system if p.version is None]
    if unpinned:
        yield Note(
            "warning",
            "system.unpinned",
            f"Neuron {release.version} does not confirm the versions of {', '.join(unpinned)}: "
            "the image installs them unpinned (the newest in the repository).",
        )
    if request.base is not None:
        yield Note(
            "info",
            "image.base",
            f"--base {request.base} must be {request.os or 'the OS'}'s Ubuntu: the Neuron apt "
            "repository and the pip wheels are built for it.",
        )
    if request.os is None:
        yield Note("info", "os.default", "OS: the newest with pip wheels (choose with --os).")
    if release.origin.resolve().parent != shipped_matrix_dir().resolve():
        yield Note(
            "warning",
            "release.not-shipped",
            f"Neuron {release.version} comes from {release.origin}, not from neuron-env itself: "
            f"the image's neuron-env ({tool.spec}) must know this release too.",
        )
    yield Note(
        "info",
        "image.devices",
        "Run it with the host's Neuron devices passed in (docker run --device=/dev/neuron0 ...; "
        "on Kubernetes, request aws.amazon.com/neuron): the driver stays on the host.",
    )


def _shown(value: str) -> str:
    return repr(value) if len(value) <= 80 else repr(value[:77] + "...")
