"""``neuron-env fleet``: collect facts from many hosts and judge them together."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import chosen_format, console, option_group, settings
from neuron_env.cli.options import (
    DocumentFormatOption,
    FleetFormatOption,
    FleetPythonOption,
    HostTimeoutOption,
    JsonOption,
    JudgeReleaseOption,
    JudgeTorchOption,
    ProfileOption,
    RedactOption,
    RegionOption,
    ReportOutputOption,
    SnapshotsOption,
    VerboseOption,
)
from neuron_env.output.formats import DocumentFormat, FleetFormat

if TYPE_CHECKING:
    from neuron_env.fleet.collect import CollectResult
    from neuron_env.fleet.ssm import SsmGateway
    from neuron_env.fleet.workflow import CollectRequest, GatewayFactory

app = typer.Typer(
    help="Validate many Trainium hosts: collect their facts (AWS Systems Manager or any other "
    "way) and judge them together.",
    no_args_is_help=True,
    rich_markup_mode=None,
)

TargetsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--targets",
        metavar="tag:KEY=VALUE",
        help="Instances with this tag (values separated by commas); repeat to require several.",
    ),
]
InstanceIdsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--instance-ids", metavar="ID", help="Instance ids (repeat, or separate by commas)."
    ),
]
ConcurrencyOption = Annotated[
    str,
    typer.Option("--concurrency", metavar="N|N%", help="SSM MaxConcurrency: hosts asked at once."),
]
MaxErrorsOption = Annotated[
    str,
    typer.Option(
        "--max-errors", metavar="N|N%", help="SSM MaxErrors: stop sending after this many."
    ),
]
RefreshOption = Annotated[
    bool, typer.Option("--refresh", help="Ask hosts that already have a snapshot again.")
]


@app.command("report")
def report(
    ctx: typer.Context,
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A directory of facts snapshots.")],
    release: JudgeReleaseOption = None,
    torch: JudgeTorchOption = None,
    output_format: FleetFormatOption = "text",
    output: ReportOutputOption = None,
    verbose: VerboseOption = False,
    redact: RedactOption = False,
) -> None:
    """Judge every snapshot in DIR with the doctor's checks and summarise the fleet.

    Hosts are grouped by failing check, with the fix for each group. Exit 0 when every host is
    ready, 1 when any is not or has no verdict.

    Examples:

      neuron-env fleet report snapshots/

      neuron-env fleet report snapshots/ --release 2.34.0 --torch 2.14   # ready for 2.34?
    """
    from neuron_env.fleet.output import FLEET
    from neuron_env.fleet.workflow import ReportRequest, report_fleet
    from neuron_env.output.emit import emit

    choice = chosen_format(FleetFormat, output_format)
    dirs = settings(ctx).matrix_dirs
    result = report_fleet(
        ReportRequest(folder=folder, matrix_dirs=dirs, release=release, torch=torch)
    )
    if redact:  # judged on the real snapshots, shown with hosts as host-1, host-2, ...
        from neuron_env.fleet.redaction import redact_fleet

        result = redact_fleet(result)
    raise typer.Exit(emit(FLEET, result, choice, output, verbose=verbose))


def _collect_options(
    output: SnapshotsOption,
    targets: TargetsOption = None,
    instance_ids: InstanceIdsOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    concurrency: ConcurrencyOption = "50",
    max_errors: MaxErrorsOption = "100%",
    timeout: HostTimeoutOption = 120,
    python: FleetPythonOption = None,
    refresh: RefreshOption = False,
) -> tuple[CollectRequest, GatewayFactory]:
    """The options 'fleet collect' and 'fleet doctor' share: which hosts, how they are asked and
    where their snapshots go, as a request whose progress lines go to stderr, and the gateway."""
    from neuron_env.fleet.workflow import CollectRequest

    err = console(stderr=True)
    request = CollectRequest(
        output=output,
        targets=tuple(targets or ()),
        instance_ids=tuple(instance_ids or ()),
        concurrency=concurrency,
        max_errors=max_errors,
        timeout=timeout,
        python=python,
        refresh=refresh,
        progress=lambda line: err.print(f"[dim]{line}[/]"),
    )
    return request, lambda: _gateway(region, profile)


@app.command("collect")
@option_group(_collect_options, into="collection", after=None)
def collect(
    collection: tuple[CollectRequest, GatewayFactory],
    json: JsonOption = False,
    output_format: DocumentFormatOption = "text",
) -> None:
    """Run 'neuron-env facts' on many instances through AWS Systems Manager Run Command.

    One snapshot per instance goes into DIR as it arrives; a re-run asks only instances without
    one (--refresh asks all). Instances that did not answer, are not SSM-managed or lack
    neuron-env are recorded in DIR/_not-collected.json. Exit 0 when every instance answered, 1
    when some did not (what arrived is kept).

    Examples:

      neuron-env fleet collect --targets tag:Cluster=train-a -o snapshots/

      neuron-env fleet collect --instance-ids i-0123456789abcdef0 --region us-east-2 -o snapshots/
    """
    from neuron_env.fleet.workflow import collect_fleet

    request, gateway = collection
    result = collect_fleet(request, gateway)
    raise typer.Exit(_print_collect(result, request.output, json, output_format))


@app.command("doctor")
@option_group(_collect_options, into="collection", after="ctx")
def doctor(
    ctx: typer.Context,
    collection: tuple[CollectRequest, GatewayFactory],
    release: JudgeReleaseOption = None,
    torch: JudgeTorchOption = None,
    output_format: FleetFormatOption = "text",
) -> None:
    """Collect (as 'fleet collect') and then report (as 'fleet report') in one step.

    Example: neuron-env fleet doctor --targets tag:Cluster=train-a -o snapshots/ --release 2.34.0
    """
    from neuron_env.fleet.output import FLEET
    from neuron_env.fleet.workflow import FleetDoctorRequest, fleet_doctor
    from neuron_env.output.emit import emit

    choice = chosen_format(FleetFormat, output_format)
    request, gateway = collection
    doctor_request = FleetDoctorRequest(
        collect=request, matrix_dirs=settings(ctx).matrix_dirs, release=release, torch=torch
    )
    raise typer.Exit(emit(FLEET, fleet_doctor(doctor_request, gateway), choice))


@app.command("policy")
def policy() -> None:
    """Print the minimal IAM policy (JSON) that 'fleet collect' and 'fleet doctor' need.

    Example: neuron-env fleet policy > fleet-policy.json
    """
    from neuron_env.cloud.output import POLICY
    from neuron_env.cloud.policy import iam_policy
    from neuron_env.cloud.workflow import IamPolicy
    from neuron_env.output.emit import emit
    from neuron_env.output.formats import JsonOnly

    raise typer.Exit(emit(POLICY, IamPolicy("fleet", iam_policy("fleet")), JsonOnly.json))


def _gateway(region: str | None, profile: str | None) -> SsmGateway:
    from neuron_env.cloud.session import aws_session
    from neuron_env.fleet.ssm import SsmGateway

    session = aws_session(region, profile)
    return SsmGateway(session.client("ec2"), session.client("ssm"))


def _print_collect(
    result: CollectResult, output: Path, as_json: bool, output_format: str = "text"
) -> int:
    """What arrived in ``output``, as text or the fleet-collect envelope; the exit code."""
    from neuron_env.fleet.output import COLLECT
    from neuron_env.output.emit import emit

    choice = chosen_format(DocumentFormat, output_format, as_json)
    return emit(COLLECT, result, choice, directory=output)
