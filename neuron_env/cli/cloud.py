"""``neuron-env launch-template`` and ``neuron-env ami``: option parsing only.

The work happens in :mod:`neuron_env.cli.cloud_flow`, imported inside the commands so that
``neuron-env --help`` never loads boto3 or jinja2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from neuron_env.cli.options import (
    DocumentOutputOption,
    HostTorchOption,
    JsonOption,
    OsOption,
    ReleaseOption,
    Sha256Option,
    SpecOption,
)

launch_template_app = typer.Typer(
    help="EC2 launch templates for Trainium hosts: DLAMI, EFA layout, IMDSv2, storage, capacity "
    "and boot-time validation, rendered from the support matrix.",
    no_args_is_help=True,
    rich_markup_mode=None,
)
ami_app = typer.Typer(
    help="Packer recipes for Neuron-ready AMIs, rendered from the support matrix.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

InstanceTypeOption = Annotated[
    str,
    typer.Option("--instance-type", metavar="TYPE", help="EC2 instance type, e.g. trn2.48xlarge."),
]
AmiOption = Annotated[
    str | None,
    typer.Option("--ami", metavar="ID", help="Your own AMI instead of the Neuron DLAMI."),
]
ResolveAmiOption = Annotated[
    bool,
    typer.Option(
        "--resolve-ami",
        help="Resolve the DLAMI's SSM parameter to an AMI id now "
        "(needs AWS credentials) instead of 'resolve:ssm:' at launch.",
    ),
]
SubnetOption = Annotated[
    str | None, typer.Option("--subnet", metavar="ID", help="Subnet of every interface.")
]
SecurityGroupOption = Annotated[
    list[str] | None,
    typer.Option(
        "--security-group",
        metavar="ID",
        help="Security group (repeatable); EFA "
        "needs one that allows all traffic to and from itself.",
    ),
]
KeyNameOption = Annotated[
    str | None, typer.Option("--key-name", metavar="NAME", help="EC2 key pair.")
]
ProfileNameOption = Annotated[
    str | None,
    typer.Option(
        "--iam-instance-profile",
        metavar="NAME|ARN",
        help="Instance profile; allow it "
        "'neuron-env launch-template policy --for instance' to publish the status tag.",
    ),
]
CapacityBlockOption = Annotated[
    str | None,
    typer.Option(
        "--capacity-block",
        metavar="CR-ID",
        help="Launch into this Capacity Block (market type capacity-block).",
    ),
]
CapacityReservationOption = Annotated[
    str | None,
    typer.Option(
        "--capacity-reservation",
        metavar="CR-ID",
        help="Target this On-Demand Capacity Reservation.",
    ),
]
PlacementGroupOption = Annotated[
    str | None,
    typer.Option(
        "--placement-group",
        metavar="NAME",
        help="Cluster placement group (not with a Capacity Block or a targeted reservation).",
    ),
]
VolumeSizeOption = Annotated[
    int, typer.Option("--volume-size", metavar="GIB", help="Root volume size (gp3, encrypted).")
]
ContainersOption = Annotated[
    bool, typer.Option("--containers", help="IMDS hop limit 2, so containers can get tokens.")
]
LevelOption = Annotated[
    int,
    typer.Option(
        "--level",
        min=0,
        max=2,
        metavar="0|1|2",
        help="Boot-time neuron-env doctor level (1 adds a device smoke test).",
    ),
]
SourceOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-env-source",
        metavar="URL|s3://B/K|ami|pypi",
        help="Where the host gets neuron-env (required): a wheel or wheelhouse URL or S3 object "
        "with --neuron-env-sha256, ami (the copy on an image built by 'neuron-env ami render'), "
        "or pypi (the host's configured index).",
    ),
]
RegionOption = Annotated[
    str | None, typer.Option("--region", metavar="REGION", help="AWS region (default: boto3's).")
]
ProfileOption = Annotated[
    str | None, typer.Option("--profile", metavar="NAME", help="AWS profile (default: boto3's).")
]


@launch_template_app.command("render")
def render(
    ctx: typer.Context,
    instance_type: InstanceTypeOption,
    torch: HostTorchOption,
    release: ReleaseOption = None,
    os: OsOption = None,
    ami: AmiOption = None,
    resolve_ami: ResolveAmiOption = False,
    subnet: SubnetOption = None,
    security_group: SecurityGroupOption = None,
    key_name: KeyNameOption = None,
    iam_instance_profile: ProfileNameOption = None,
    capacity_block: CapacityBlockOption = None,
    capacity_reservation: CapacityReservationOption = None,
    placement_group: PlacementGroupOption = None,
    volume_size: VolumeSizeOption = 512,
    containers: ContainersOption = False,
    level: LevelOption = 1,
    neuron_env_source: SourceOption = None,
    neuron_env_sha256: Sha256Option = None,
    neuron_env_spec: SpecOption = None,
    output_format: Annotated[
        str,
        typer.Option(
            "--format",
            metavar="FORMAT",
            help="json (LaunchTemplateData), cloudformation, terraform or user-data.",
        ),
    ] = "json",
    output: DocumentOutputOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
) -> None:
    """Print a launch template for Trainium hosts, from the support matrix.

    The DLAMI through its public SSM parameter, IMDSv2 required, the instance type's EFA
    interfaces, a 512 GiB encrypted gp3 root, capacity options, and user data that installs
    neuron-env and validates the host at boot (neuron-env doctor). Notes go to stderr.

    Examples:

    \b
      neuron-env launch-template render --instance-type trn2.48xlarge --torch 2.14 \\
          --neuron-env-source s3://my-bucket/neuron_env-0.1.0-py3-none-any.whl \\
          --neuron-env-sha256 "$(sha256sum neuron_env-0.1.0-py3-none-any.whl | cut -d' ' -f1)"
      neuron-env launch-template render --instance-type trn2.48xlarge --torch 2.14 \\
          --ami ami-0123456789abcdef0 --neuron-env-source ami \\
          --capacity-block cr-0123456789abcdef0 --subnet subnet-0123456789abcdef0 \\
          --security-group sg-0123456789abcdef0 --format terraform -o lt.tf
    """
    from neuron_env.cli import cloud_flow

    request = cloud_flow.launch_request(_launch_options(locals()))
    cloud_flow.render(ctx, request, output_format, output, resolve_ami, region, profile)


@launch_template_app.command("create")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="Launch-template name.")],
    instance_type: InstanceTypeOption,
    torch: HostTorchOption,
    release: ReleaseOption = None,
    os: OsOption = None,
    ami: AmiOption = None,
    resolve_ami: ResolveAmiOption = False,
    subnet: SubnetOption = None,
    security_group: SecurityGroupOption = None,
    key_name: KeyNameOption = None,
    iam_instance_profile: ProfileNameOption = None,
    capacity_block: CapacityBlockOption = None,
    capacity_reservation: CapacityReservationOption = None,
    placement_group: PlacementGroupOption = None,
    volume_size: VolumeSizeOption = 512,
    containers: ContainersOption = False,
    level: LevelOption = 1,
    neuron_env_source: SourceOption = None,
    neuron_env_sha256: Sha256Option = None,
    neuron_env_spec: SpecOption = None,
    set_default: Annotated[
        bool, typer.Option("--set-default", help="Make the resulting version the default.")
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Check permissions and report what would change; change nothing."
        ),
    ] = False,
    json: JsonOption = False,
    region: RegionOption = None,
    profile: ProfileOption = None,
) -> None:
    """Create the launch template, or a new version when its data changed.

    Idempotent: the same data creates no new version. Uses boto3's credentials and region
    (or --profile / --region); AWS errors exit 1 and leave nothing half-created.

    Example:

    \b
      neuron-env launch-template create --name trn2-train --instance-type trn2.48xlarge \\
          --torch 2.14 --neuron-env-source URL --neuron-env-sha256 HEX --set-default
    """
    from neuron_env.cli import cloud_flow

    request = cloud_flow.launch_request(_launch_options(locals()))
    options = cloud_flow.CreateOptions(name, set_default, dry_run, json, resolve_ami)
    cloud_flow.create(ctx, request, options, region, profile)


@launch_template_app.command("policy")
def policy(
    audience: Annotated[
        str,
        typer.Option(
            "--for",
            metavar="WHO",
            help="cli: who runs neuron-env's AWS commands; "
            "instance: the launched hosts' instance profile.",
        ),
    ] = "cli",
) -> None:
    """Print the minimal IAM policy (JSON) for neuron-env's AWS commands or for the instances.

    Example: neuron-env launch-template policy --for instance > instance-policy.json
    """
    from neuron_env.cli import cloud_flow

    cloud_flow.print_policy(audience)


@ami_app.command("render")
def ami_render(
    ctx: typer.Context,
    torch: HostTorchOption,
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Directory for the recipe.", file_okay=False
        ),
    ],
    release: ReleaseOption = None,
    os: OsOption = None,
    base: Annotated[
        str,
        typer.Option(
            "--base",
            metavar="dlami|ubuntu",
            help="Start from the Neuron DLAMI or from plain Ubuntu.",
        ),
    ] = "dlami",
    builder: Annotated[
        str,
        typer.Option(
            "--instance-type",
            metavar="TYPE",
            help="Builder instance type (a Trainium instance: the build runs neuron-env doctor).",
        ),
    ] = "trn2.3xlarge",
    level: LevelOption = 1,
    volume_size: VolumeSizeOption = 512,
    neuron_env_source: SourceOption = None,
    neuron_env_sha256: Sha256Option = None,
    neuron_env_spec: SpecOption = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite different files.")] = False,
) -> None:
    """Write a Packer recipe (HCL2, amazon-ebs) that builds a Neuron-ready AMI.

    Neuron apt packages pinned to the release, kernel headers, EFA, the Python environment via
    neuron-env install, and a final neuron-env doctor that fails the build if the image is not
    healthy.

    Example:

    \b
      neuron-env ami render --torch 2.14 --output ./neuron-ami \\
          --neuron-env-source https://artifacts.example.com/neuron_env-0.1.0-py3-none-any.whl \\
          --neuron-env-sha256 HEX
      cd neuron-ami && packer init . && packer build .
    """
    from neuron_env.cli import cloud_flow

    cloud_flow.render_ami(
        ctx,
        cloud_flow.ami_request(
            torch,
            release,
            os,
            base,
            builder,
            level,
            volume_size,
            (neuron_env_source, neuron_env_sha256, neuron_env_spec),
        ),
        output,
        force,
    )


def _launch_options(options: dict[str, Any]) -> dict[str, Any]:
    """The command's options that describe the launch template itself."""
    names = (
        "instance_type",
        "torch",
        "release",
        "os",
        "ami",
        "subnet",
        "security_group",
        "key_name",
        "iam_instance_profile",
        "capacity_block",
        "capacity_reservation",
        "placement_group",
        "volume_size",
        "containers",
        "level",
        "neuron_env_source",
        "neuron_env_sha256",
        "neuron_env_spec",
    )
    return {name: options[name] for name in names}
