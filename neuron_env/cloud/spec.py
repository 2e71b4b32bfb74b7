"""A launch template, decided: the user's options and the matrix → a :class:`LaunchSpec`.

Pure: no AWS calls, no files. Everything a renderer needs (JSON, CloudFormation, Terraform, user
data) is decided here once, so the formats cannot disagree.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import field
from typing import Literal, NamedTuple

from neuron_env.cloud import values
from neuron_env.cloud.base_image import ImageChoice, custom_image, dlami_image, image_notes
from neuron_env.cloud.bootstrap import DEFAULT_VENV, STATUS_TAG, BootstrapArgs
from neuron_env.cloud.efa import NetworkInterface, efa_layout
from neuron_env.cloud.tool_source import tool_source
from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.frozen import frozen
from neuron_env.matrix import Matrix, Note, Release, Request, Target, resolve_target
from neuron_env.matrix.model import InstanceType, Pairing
from neuron_env.resources import shipped_matrix_dir
from neuron_env.schema import did_you_mean
from neuron_env.wording import join_words

# The largest EC2 instances have 32 network cards; past 64 the matrix file is wrong, and the
# interface list (one per EFA card) must stay bounded.
MAX_NETWORK_CARDS = 64
MIN_ROOT_GIB = 512  # Neuron docs: the primary EBS volume must be at least 512 GB on Trn1/2/3.
CapacityKind = Literal["capacity-block", "capacity-reservation"]


@frozen
class LaunchRequest:
    """The options of ``neuron-env launch-template render`` / ``create``."""

    instance_type: str
    torch: str
    release: str | None = None
    os: str | None = None
    ami: str | None = None
    resolve_ami: bool = False  # the DLAMI's SSM parameter resolved to an id now, not at launch
    subnet: str | None = None
    security_groups: tuple[str, ...] = ()
    key_name: str | None = None
    iam_instance_profile: str | None = None
    capacity_block: str | None = None
    capacity_reservation: str | None = None
    placement_group: str | None = None
    volume_size: int = MIN_ROOT_GIB
    containers: bool = False
    level: int = 1
    neuron_env_source: str | None = None
    neuron_env_sha256: str | None = None
    neuron_env_spec: str | None = None


@frozen
class Capacity:
    """Where the instances' capacity comes from: a Capacity Block or a targeted reservation."""

    kind: CapacityKind
    reservation_id: str


@frozen
class LaunchSpec:
    """Everything a launch template holds, in neuron-env's terms."""

    release: str
    torch: str
    os: str
    instance_type: str
    instance: InstanceType
    image: ImageChoice
    interfaces: tuple[NetworkInterface, ...]
    root_device: str
    volume_size: int
    hop_limit: int
    bootstrap: BootstrapArgs
    subnet: str | None = None
    security_groups: tuple[str, ...] = ()
    key_name: str | None = None
    iam_instance_profile: str | None = None
    capacity: Capacity | None = None
    placement_group: str | None = None
    notes: tuple[Note, ...] = field(default=())

    @property
    def instance_tags(self) -> dict[str, str]:
        """Tags every instance gets at launch; boot-time validation updates the status."""
        return {
            STATUS_TAG: "pending",
            "neuron-env:release": self.release,
            "neuron-env:torch": self.torch,
        }

    @property
    def description(self) -> str:
        return f"Neuron {self.release}, PyTorch {self.torch}, {self.instance_type}, {self.os}"

    def with_image_id(self, image_id: str) -> LaunchSpec:
        """This spec with its image resolved to an AMI id (``--resolve-ami``)."""
        return dataclasses.replace(self, image=self.image.resolved(image_id))


class Resolved(NamedTuple):
    """What a launch template, an AMI or an image is built for: the release, the OS, the target
    the matrix resolves and its pairing."""

    release: Release
    os: str
    target: Target
    pairing: Pairing


def resolve_host(
    matrix: Matrix,
    torch: str,
    release: str | None,
    os: str | None,
    instance_type: str | None = None,
) -> Resolved:
    """Resolve a build's options: the release (default: the latest), the OS (default: the newest
    with pip wheels), the PyTorch minor and the instance type; unsupported ones raise."""
    chosen = matrix.get(release)
    os_id = os or default_os(chosen)
    request = Request(torch, os=os_id, instance_type=instance_type, release=str(chosen.version))
    target = resolve_target(matrix, request)
    return Resolved(chosen, os_id, target, pairing_of(chosen, target.torch))


def build_launch_spec(matrix: Matrix, request: LaunchRequest) -> LaunchSpec:
    """Decide the launch template for ``request``; bad or unsupported input raises BadInput."""
    release, os_id, target, pairing = resolve_host(
        matrix, request.torch, request.release, request.os, request.instance_type
    )
    instance = instance_facts(release, request.instance_type)
    image = _image(release, pairing, os_id, request.ami)
    bootstrap = _bootstrap_args(release, pairing, image, request)
    capacity = _capacity(request, instance)
    return LaunchSpec(
        release=str(release.version),
        torch=str(pairing.torch),
        os=os_id,
        instance_type=request.instance_type,
        instance=instance,
        image=image,
        interfaces=efa_layout(instance),
        root_device=root_device(os_id),
        volume_size=values.volume_size(request.volume_size, MIN_ROOT_GIB),
        hop_limit=2 if request.containers else 1,
        bootstrap=bootstrap,
        subnet=_optional(request.subnet, "subnet", "--subnet"),
        security_groups=tuple(
            values.resource_id("security-group", sg, "--security-group")
            for sg in request.security_groups
        ),
        key_name=values.key_name(request.key_name) if request.key_name is not None else None,
        iam_instance_profile=_profile(request.iam_instance_profile),
        capacity=capacity,
        placement_group=_placement(request, capacity),
        notes=tuple(_notes(release, target.notes, image, request, os_id, bootstrap)),
    )


def default_os(release: Release) -> str:
    """The newest OS release that is supported and has pip wheels (ubuntu-26.04 for 2.33)."""
    usable = [k for k, os in release.os.items() if os.support == "supported" and os.wheels]
    if not usable:
        raise UnsupportedCombination(
            f"Neuron {release.version} lists no OS with supported pip wheels.", hint="Pass --os."
        )
    return max(usable, key=_os_sort_key)


def _near(release: Release, instance_type: str) -> str:
    near = did_you_mean(instance_type, sorted(release.instance_types))
    return f"{near[0].upper()}{near[1:]} " if near else ""


def instance_facts(release: Release, instance_type: str) -> InstanceType:
    """The matrix's row for ``instance_type``: its network cards and EFA interfaces."""
    known = release.instance_types.get(instance_type)
    if known is not None:
        if known.network_cards > MAX_NETWORK_CARDS:
            raise BadInput(
                f"{release.origin}: instance type {instance_type} has network-cards = "
                f"{known.network_cards}; EC2 instances have at most {MAX_NETWORK_CARDS} network "
                "cards, and a launch template holds one interface per EFA card.",
                hint="Correct the matrix file ('aws ec2 describe-instance-types' reports "
                "MaximumNetworkCards).",
            )
        return known
    raise UnsupportedCombination(
        f"{instance_type} is not in the instance table of Neuron {release.version}, so its "
        "network cards and EFA interfaces are unknown (Trn3 instance-type names are not "
        f"published yet). {_near(release, instance_type)}"
        f"Known types: {join_words(sorted(release.instance_types))}.",
        hint=f'Describe it in a matrix file ([instance-types."{instance_type}"] with '
        "network-cards, max-efa and enis-per-card, as 'aws ec2 describe-instance-types' reports "
        "them) and pass its directory with --matrix-dir.",
    )


def root_device(os_id: str) -> str:
    """The root device name of the OS's AMIs: ``/dev/sda1`` on Ubuntu, ``/dev/xvda`` on AL2023."""
    return "/dev/xvda" if os_id.startswith("amzn") else "/dev/sda1"


def _image(release: Release, pairing: Pairing, os_id: str, ami: str | None) -> ImageChoice:
    if ami is not None:
        return custom_image(values.resource_id("ami", ami, "--ami"), os_id)
    return dlami_image(release, pairing, os_id, kind=None)


def _bootstrap_args(
    release: Release, pairing: Pairing, image: ImageChoice, request: LaunchRequest
) -> BootstrapArgs:
    if not image.has_python_env and image.source == "dlami":
        require_wheels(release, pairing, image.os)
    tool = tool_source(
        request.neuron_env_source,
        request.neuron_env_sha256,
        request.neuron_env_spec,
        allow_ami=image.source == "ami",
        ami_option=True,
    )
    return BootstrapArgs(
        release=str(release.version),
        torch=pairing.torch_minor,
        tool=tool,
        venv=image.venv or DEFAULT_VENV,
        level=request.level,
    )


def require_wheels(release: Release, pairing: Pairing, os_id: str) -> None:
    """Refuse a host whose Python environment must be built from pip wheels that do not exist."""
    os_entry = release.os[os_id]
    if os_entry.wheels:
        return
    raise UnsupportedCombination(
        f"No DLAMI of Neuron {release.version} carries PyTorch {pairing.torch} on {os_id}, and "
        f"there are no torch-neuronx pip wheels for {os_entry.name}: the host's "
        "'neuron-env install' could not build the environment.",
        hint=f"{os_entry.instead} Or pick an OS with wheels: --os {default_os(release)}.",
    )


def pairing_of(release: Release, torch: str) -> Pairing:
    """The release's pairing for a resolved torch version (``2.14.0``)."""
    major, minor, *_ = torch.split(".")
    pairing = release.pairing_for(f"{major}.{minor}")
    if pairing is None:  # resolve_target accepted the request, so this cannot happen
        raise UnsupportedCombination(f"Neuron {release.version} has no pairing for torch {torch}.")
    return pairing


def _capacity(request: LaunchRequest, instance: InstanceType) -> Capacity | None:
    if request.capacity_block and request.capacity_reservation:
        raise BadInput(
            "--capacity-block and --capacity-reservation exclude each other: a Capacity Block "
            "is itself a capacity reservation. Give one of them."
        )
    if request.capacity_block:
        if "capacity-block" not in instance.usage_classes:
            raise UnsupportedCombination(
                f"Capacity Blocks are not offered for this instance type "
                f"(usage classes: {join_words(instance.usage_classes)})."
            )
        cr = values.resource_id("capacity-reservation", request.capacity_block, "--capacity-block")
        return Capacity("capacity-block", cr)
    if request.capacity_reservation:
        cr = values.resource_id(
            "capacity-reservation", request.capacity_reservation, "--capacity-reservation"
        )
        return Capacity("capacity-reservation", cr)
    return None


def _placement(request: LaunchRequest, capacity: Capacity | None) -> str | None:
    if request.placement_group is None:
        return None
    if capacity is not None:
        what = "a Capacity Block" if capacity.kind == "capacity-block" else "a targeted reservation"
        raise BadInput(
            f"--placement-group cannot be combined with {what}: Capacity Blocks are already "
            "placed close together in an EC2 UltraCluster, and a placement group can reduce how "
            "many reserved instances you get (AWS guidance; ParallelCluster and eksctl refuse "
            "it too).",
            hint="Drop --placement-group, or launch on-demand capacity into the placement group.",
        )
    return values.placement_group(request.placement_group)


def _notes(
    release: Release,
    target_notes: tuple[Note, ...],
    image: ImageChoice,
    request: LaunchRequest,
    os_id: str,
    bootstrap: BootstrapArgs,
) -> Iterator[Note]:
    yield from (n for n in target_notes if n.code != "python.unspecified")
    yield from image_notes(image, release)
    yield from bootstrap.tool.notes()
    if request.os is None:
        yield Note("info", "os.default", f"OS: {os_id} (the default; choose with --os).")
    if release.origin.resolve().parent != shipped_matrix_dir().resolve():
        yield Note(
            "warning",
            "release.not-shipped",
            f"Neuron {release.version} comes from {release.origin}, not from neuron-env itself: "
            f"the host's neuron-env ({bootstrap.tool.spec}) must know this release too "
            "(a version that ships it, or its file in $NEURON_ENV_MATRIX_DIR on the image).",
        )
    yield Note(
        "info",
        "network.efa",
        "EFA needs a security group that allows all traffic to and from itself, and all "
        "interfaces in one subnet; instances with several network cards get no automatic "
        "public IP (use a private subnet with NAT, or attach an Elastic IP).",
    )


def _optional(value: str | None, kind: str, option: str) -> str | None:
    return None if value is None else values.resource_id(kind, value, option)


def _profile(value: str | None) -> str | None:
    return None if value is None else values.instance_profile(value)


def _os_sort_key(os_id: str) -> tuple[str, tuple[int, ...]]:
    name, _, version = os_id.rpartition("-")
    return name, tuple(int(p) for p in version.split(".") if p.isascii() and p.isdigit())
