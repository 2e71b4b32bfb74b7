"""Where neuron-env runs (a host, a container, a Kubernetes pod, an image-based OS) and fixes
phrased for it: a pod gets devices from its spec, not from apt or modprobe inside it; an
image-based host (Bottlerocket) gets its driver from the node image, never from apt."""

from __future__ import annotations

from neuron_env.checks.model import Context, Verdict, fail, ok, skip
from neuron_env.facts import HostFacts
from neuron_env.wording import plural

# os-release IDs of hosts whose packages come with the image: no apt, no dnf, no DKMS.
IMAGE_BASED = {"bottlerocket": "Bottlerocket", "flatcar": "Flatcar Container Linux"}
DEVICE_PLUGIN = (
    "the Neuron device plugin running on the node "
    "(helm upgrade --install neuron-helm-chart oci://public.ecr.aws/neuron/neuron-helm-chart)"
)
POD_DEVICES = (
    "Request Neuron devices in the pod spec: resources.limits 'aws.amazon.com/neuron: 1' "
    "(whole devices) or 'aws.amazon.com/neuroncore: N' (cores), with " + DEVICE_PLUGIN + "."
)
DOCKER_DEVICES = (
    "Start the container with the host's devices: docker run --device=/dev/neuron0 ... "
    "(one --device per /dev/neuronN on the host)."
)
POD_DRIVER = (
    "On the node, not in this pod: run it from a node image with the Neuron driver (the EKS "
    "accelerated AMI, or Bottlerocket, whose standard EKS variants package it) and " + DEVICE_PLUGIN
)
ON_THE_HOST = "on the host: "


def in_container(facts: HostFacts) -> bool:
    return bool(facts.os and facts.os.container)


def in_pod(facts: HostFacts) -> bool:
    return bool(facts.os and facts.os.kubernetes)


def image_based(facts: HostFacts) -> str | None:
    """The name of an image-based OS (``Bottlerocket``), else None."""
    return IMAGE_BASED.get(facts.os.id or "") if facts.os else None


def image_fix(name: str) -> str:
    """The driver fix on an image-based host: a node image with Neuron support, never apt."""
    if name == "Bottlerocket":
        return (
            "Bottlerocket has no apt: replace the node with a current Bottlerocket aws-k8s-* "
            "variant (its standard EKS variants package the Neuron driver), and run "
            + DEVICE_PLUGIN
            + "."
        )
    return f"{name} has no apt: use a node image of {name} that ships the Neuron driver."


def driver_step(facts: HostFacts, command: str) -> str:
    """A driver step as it fits where neuron-env runs: here, on the host, on the node's image."""
    if in_pod(facts):
        return POD_DRIVER + "."
    if in_container(facts):
        return f"{ON_THE_HOST}{command}"
    name = image_based(facts)
    return image_fix(name) if name else apt_step(facts, command)


APT_ELSEWHERE = "On an Ubuntu host (the Neuron apt repository serves Ubuntu only): "


def apt_step(facts: HostFacts, command: str) -> str:
    """``command`` as pasted here; an apt step on a host that is not Ubuntu (Debian 12, say)
    is labelled as the command for an Ubuntu host, where the Neuron apt repository works."""
    return APT_ELSEWHERE + command if "apt-get" in command and apt_elsewhere(facts) else command


def apt_elsewhere(facts: HostFacts) -> bool:
    """An OS whose apt cannot reach the Neuron repository (not Ubuntu), a container's included:
    a Debian image's apt cannot install the runtime either."""
    os_id = facts.os.id if facts.os else None
    return os_id not in (None, "ubuntu")


def device_fix(facts: HostFacts) -> str:
    """How to give a container or pod the Neuron devices."""
    return POD_DEVICES if in_pod(facts) else DOCKER_DEVICES


def check_container(facts: HostFacts, ctx: Context) -> Verdict:
    """``platform.container``: in a container or Kubernetes pod, the Neuron devices were passed
    in (no /dev/neuron* there means the pod got no device, not that the host lacks a driver)."""
    assert facts.driver is not None
    if not in_container(facts):
        return ok("Not in a container")
    where = "a Kubernetes pod" if in_pod(facts) else "a container"
    nodes = facts.driver.devices
    if nodes:
        return ok(f"In {where}; {plural(len(nodes), 'Neuron device')} passed in")
    if not facts.driver.module_loaded:
        return skip(f"In {where}; the host's driver is not loaded (see driver.module)")
    return fail(
        f"In {where} that was given no Neuron device "
        "(no /dev/neuron*; the host's driver is loaded)",
        fix=device_fix(facts),
    )
