"""``neuron-env launch-template`` and ``neuron-env ami``: their options, and nothing else.

The work happens in :mod:`neuron_env.cloud.workflow` and the output in
:mod:`neuron_env.cloud.output`, imported inside the commands so that ``neuron-env --help`` never
loads boto3 or jinja2.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import chosen_format, option_group, settings
from neuron_env.cli.options import (
    AmiBaseOption,
    BootLevelOption,
    BuilderInstanceTypeOption,
    DocumentFormatOption,
    DocumentOutputOption,
    DryRunOption,
    HostSourceOption,
    InstanceTypeOption,
    JsonOption,
    OsOption,
    ProfileOption,
    RecipeDirOption,
    RegionOption,
    ReleaseOption,
    Sha256Option,
    SpecOption,
    TorchOption,
    format_option,
)
from neuron_env.cloud.session import aws_session
from neuron_env.output.formats import DocumentFormat, JsonOnly, LaunchTemplateFormat, TextOnly

if TYPE_CHECKING:
    from neuron_env.cloud.spec import LaunchRequest

# The options only this command takes (the shared ones are in cli/options.py).
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


def _launch_options(
    instance_type: InstanceTypeOption,
    torch: TorchOption,
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
    level: BootLevelOption = 1,
    neuron_env_source: HostSourceOption = None,
    neuron_env_sha256: Sha256Option = None,
    neuron_env_spec: SpecOption = None,
) -> LaunchRequest:
    """The options 'launch-template render' and 'create' share: the host and how it launches."""
    from neuron_env.cloud.spec import LaunchRequest

    return LaunchRequest(
        instance_type=instance_type, torch=torch, release=release, os=os, ami=ami,
        resolve_ami=resolve_ami, subnet=subnet, security_groups=tuple(security_group or ()),
        key_name=key_name, iam_instance_profile=iam_instance_profile,
        capacity_block=capacity_block, capacity_reservation=capacity_reservation,
        placement_group=placement_group, volume_size=volume_size, containers=containers,
        level=level, neuron_env_source=neuron_env_source, neuron_env_sha256=neuron_env_sha256,
        neuron_env_spec=neuron_env_spec,
    )  # fmt: skip


@launch_template_app.command("render")
@option_group(_launch_options, into="launch", after="ctx")
def render(
    ctx: typer.Context,
    launch: LaunchRequest,
    output_format: Annotated[
        str,
        format_option(
            LaunchTemplateFormat,
            "json (LaunchTemplateData), cloudformation, terraform or user-data.",
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
    from neuron_env.cloud.output import LAUNCH_TEMPLATE
    from neuron_env.cloud.workflow import RenderRequest, render_launch_template
    from neuron_env.output.emit import emit

    choice = chosen_format(LaunchTemplateFormat, output_format)  # checked before AWS is asked
    request = RenderRequest(launch=launch, matrix_dirs=settings(ctx).matrix_dirs)
    template = render_launch_template(request, lambda: aws_session(region, profile))
    raise typer.Exit(emit(LAUNCH_TEMPLATE, template, choice, output))


@launch_template_app.command("create")
@option_group(_launch_options, into="launch", after="name")
def create(
    ctx: typer.Context,
    name: Annotated[str, typer.Option("--name", metavar="NAME", help="Launch-template name.")],
    launch: LaunchRequest,
    set_default: Annotated[
        bool, typer.Option("--set-default", help="Make the resulting version the default.")
    ] = False,
    dry_run: DryRunOption = False,
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
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
    from neuron_env.cloud.output import CREATED
    from neuron_env.cloud.workflow import CreateRequest, create_launch_template
    from neuron_env.output.emit import emit

    request = CreateRequest(
        launch=launch,
        name=name,
        set_default=set_default,
        dry_run=dry_run,
        matrix_dirs=settings(ctx).matrix_dirs,
    )
    created = create_launch_template(request, lambda: aws_session(region, profile))
    raise typer.Exit(emit(CREATED, created, chosen_format(DocumentFormat, output_format, json)))


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
    from neuron_env.cloud.output import POLICY
    from neuron_env.cloud.workflow import iam_policy_for
    from neuron_env.output.emit import emit

    raise typer.Exit(emit(POLICY, iam_policy_for(audience), JsonOnly.json))


@ami_app.command("render")
def ami_render(
    ctx: typer.Context,
    torch: TorchOption,
    output: RecipeDirOption,
    release: ReleaseOption = None,
    os: OsOption = None,
    base: AmiBaseOption = "dlami",
    builder: BuilderInstanceTypeOption = "trn2.3xlarge",
    level: BootLevelOption = 1,
    volume_size: VolumeSizeOption = 512,
    neuron_env_source: HostSourceOption = None,
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
    from neuron_env.cloud.ami import AmiRequest
    from neuron_env.cloud.output import RECIPE
    from neuron_env.cloud.workflow import AmiRenderRequest, render_ami_recipe
    from neuron_env.output.emit import emit

    ami = AmiRequest(
        torch=torch,
        release=release,
        os=os,
        base=base,
        builder=builder,
        level=level,
        volume_size=volume_size,
        neuron_env_source=neuron_env_source,
        neuron_env_sha256=neuron_env_sha256,
        neuron_env_spec=neuron_env_spec,
    )
    request = AmiRenderRequest(
        ami=ami, output=output, force=force, matrix_dirs=settings(ctx).matrix_dirs
    )
    raise typer.Exit(emit(RECIPE, render_ami_recipe(request), TextOnly.text))
