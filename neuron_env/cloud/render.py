"""A :class:`LaunchSpec` laid out as LaunchTemplateData, user data, CloudFormation or Terraform.

:func:`launch_template_data` builds the EC2 API document; CloudFormation and Terraform templates
lay out that same document (``templates/launch-template/``), so the formats cannot drift apart.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from typing import Any, Literal

from neuron_env import __version__
from neuron_env.cloud.bootstrap import INSTALLED_PATH, bootstrap_script
from neuron_env.cloud.efa import NetworkInterface
from neuron_env.cloud.spec import LaunchSpec
from neuron_env.errors import BadInput, check_format
from neuron_env.matrix import Note
from neuron_env.templating import render

Format = Literal["json", "cloudformation", "terraform", "user-data"]
FORMATS: tuple[Format, ...] = ("json", "cloudformation", "terraform", "user-data")
USER_DATA_LIMIT = 16384  # bytes, before base64: the EC2 limit on user data
HEREDOC_DELIMITER = "NEURON_ENV_BOOTSTRAP"


def render_format(spec: LaunchSpec, output_format: str) -> str:
    """The launch template of ``spec`` in ``output_format`` (one of :data:`FORMATS`)."""
    check_format(output_format, FORMATS)
    script = user_data(spec)
    if output_format == "user-data":
        return script
    data = launch_template_data(spec, script)
    if output_format == "json":
        return json.dumps(data, indent=2) + "\n"
    return render(f"templates/launch-template/{output_format}.j2", _context(spec, data, script))


def launch_template_data(spec: LaunchSpec, script: str) -> dict[str, Any]:
    """The EC2 ``LaunchTemplateData`` document, UserData base64-encoded as the API wants it."""
    data: dict[str, Any] = {"ImageId": spec.image.image_id, "InstanceType": spec.instance_type}
    if spec.key_name is not None:
        data["KeyName"] = spec.key_name
    if spec.iam_instance_profile is not None:
        data["IamInstanceProfile"] = _profile(spec.iam_instance_profile)
    data["MetadataOptions"] = {
        "HttpEndpoint": "enabled",
        "HttpTokens": "required",
        "HttpPutResponseHopLimit": spec.hop_limit,
    }
    data["NetworkInterfaces"] = [_interface(spec, nic) for nic in spec.interfaces]
    data["BlockDeviceMappings"] = [_root_volume(spec)]
    data.update(_capacity(spec))
    data["TagSpecifications"] = [
        {"ResourceType": "instance", "Tags": [{"Key": k, "Value": v} for k, v in _tags(spec)]}
    ]
    data["UserData"] = base64.b64encode(script.encode()).decode("ascii")
    return data


def user_data(spec: LaunchSpec) -> str:
    """The cloud-init user data: installs the bootstrap script and runs it with the spec's args."""
    script = bootstrap_script()
    if HEREDOC_DELIMITER in script:
        raise AssertionError(f"scripts/bootstrap.sh must not contain {HEREDOC_DELIMITER}")
    text = render(
        "templates/user-data.sh.j2",
        {
            "version": __version__,
            "description": spec.description,
            "bootstrap_script": script,
            "delimiter": HEREDOC_DELIMITER,
            "installed_path": INSTALLED_PATH,
            "installed_dir": INSTALLED_PATH.rsplit("/", 1)[0],
            "arguments": spec.bootstrap.argv(),
        },
    )
    size = len(text.encode())
    if size > USER_DATA_LIMIT:
        raise BadInput(
            f"The user data would be {size} bytes; EC2 accepts at most {USER_DATA_LIMIT}.",
            hint="Shorten --neuron-env-source or --neuron-env-spec.",
        )
    return text


def warnings_for_comments(notes: Iterable[Note]) -> list[str]:
    """Warnings, one line each, for the comment header of CloudFormation and Terraform."""
    return [n.message for n in notes if n.level == "warning"]


def default_template_name(spec: LaunchSpec) -> str:
    return "neuron-env-" + spec.instance_type.replace(".", "-")


def _context(spec: LaunchSpec, data: dict[str, Any], script: str) -> dict[str, Any]:
    return {
        "version": __version__,
        "description": spec.description,
        "name": default_template_name(spec),
        "warnings": warnings_for_comments(spec.notes),
        "data": {k: v for k, v in data.items() if k != "UserData"},
        "tags": dict(_tags(spec)),
        "tag_width": max(len(key) + 2 for key, _ in _tags(spec)),  # quoted keys, aligned
        "user_data": script,
    }


def _profile(value: str) -> dict[str, str]:
    return {"Arn": value} if value.startswith("arn:") else {"Name": value}


def _interface(spec: LaunchSpec, nic: NetworkInterface) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "NetworkCardIndex": nic.network_card_index,
        "DeviceIndex": nic.device_index,
        "InterfaceType": nic.interface_type,
        "DeleteOnTermination": True,
    }
    if spec.subnet is not None:
        entry["SubnetId"] = spec.subnet
    if spec.security_groups:
        entry["Groups"] = list(spec.security_groups)
    return entry


def _root_volume(spec: LaunchSpec) -> dict[str, Any]:
    return {
        "DeviceName": spec.root_device,
        "Ebs": {
            "VolumeSize": spec.volume_size,
            "VolumeType": "gp3",
            "Encrypted": True,
            "DeleteOnTermination": True,
        },
    }


def _capacity(spec: LaunchSpec) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if spec.capacity is not None:
        if spec.capacity.kind == "capacity-block":
            out["InstanceMarketOptions"] = {"MarketType": "capacity-block"}
        target = {"CapacityReservationId": spec.capacity.reservation_id}
        out["CapacityReservationSpecification"] = {"CapacityReservationTarget": target}
    if spec.placement_group is not None:
        out["Placement"] = {"GroupName": spec.placement_group}
    return out


def _tags(spec: LaunchSpec) -> list[tuple[str, str]]:
    return list(spec.instance_tags.items())
