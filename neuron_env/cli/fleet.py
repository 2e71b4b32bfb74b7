"""``neuron-env fleet``: collect facts from many hosts and judge them together."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from neuron_env.cli._common import check_format, console, load_matrix, print_json, write_output
from neuron_env.cli.options import (
    JsonOption,
    JudgeReleaseOption,
    JudgeTorchOption,
    ReportFormatOption,
    ReportOutputOption,
    SnapshotsOption,
)
from neuron_env.errors import BadInput

if TYPE_CHECKING:
    from neuron_env.fleet.collect import CollectOptions, CollectResult
    from neuron_env.fleet.model import FleetReport

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
RegionOption = Annotated[str | None, typer.Option("--region", metavar="REGION", help="AWS region.")]
ProfileOption = Annotated[
    str | None, typer.Option("--profile", metavar="NAME", help="AWS profile.")
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
TimeoutOption = Annotated[
    int,
    typer.Option("--timeout", min=30, metavar="SECONDS", help="How long each host may take."),
]
HostPythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="The Python environment to inspect on the hosts (default: the bootstrap's venv).",
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
    output_format: ReportFormatOption = "text",
    output: ReportOutputOption = None,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List every host.")] = False,
) -> None:
    """Judge every snapshot in DIR with the doctor's checks and summarise the fleet.

    Hosts are grouped by failing check, with the fix for each group. Exit 0 when every host is
    ready, 1 when any is not or has no verdict.

    Examples:

      neuron-env fleet report snapshots/

      neuron-env fleet report snapshots/ --release 2.34.0 --torch 2.14   # ready for 2.34?
    """
    from neuron_env.fleet.judge import report_fleet
    from neuron_env.report import FORMATS

    check_format(output_format, FORMATS)
    result = report_fleet(load_matrix(ctx), folder, release=release, torch=torch)
    _show(result, output_format, output, verbose)
    raise typer.Exit(result.exit_code)


@app.command("collect")
def collect(
    output: SnapshotsOption,
    targets: TargetsOption = None,
    instance_ids: InstanceIdsOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    concurrency: ConcurrencyOption = "50",
    max_errors: MaxErrorsOption = "100%",
    timeout: TimeoutOption = 120,
    python: HostPythonOption = None,
    refresh: RefreshOption = False,
    json: JsonOption = False,
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
    options = _collect_options(
        targets, instance_ids, concurrency, max_errors, timeout, python, refresh
    )
    result = _run_collect(options, output, region, profile)
    _print_collect(result, output, json)
    raise typer.Exit(1 if result.missing else 0)


@app.command("doctor")
def doctor(
    ctx: typer.Context,
    output: SnapshotsOption,
    targets: TargetsOption = None,
    instance_ids: InstanceIdsOption = None,
    region: RegionOption = None,
    profile: ProfileOption = None,
    concurrency: ConcurrencyOption = "50",
    max_errors: MaxErrorsOption = "100%",
    timeout: TimeoutOption = 120,
    python: HostPythonOption = None,
    refresh: RefreshOption = False,
    release: JudgeReleaseOption = None,
    torch: JudgeTorchOption = None,
    output_format: ReportFormatOption = "text",
) -> None:
    """Collect (as 'fleet collect') and then report (as 'fleet report') in one step.

    Example: neuron-env fleet doctor --targets tag:Cluster=train-a -o snapshots/ --release 2.34.0
    """
    from neuron_env.fleet.judge import report_fleet
    from neuron_env.report import FORMATS

    check_format(output_format, FORMATS)
    from neuron_env.doctor import check_request

    matrix = load_matrix(ctx)  # bad input (an unknown release) before anything runs remotely
    check_request(matrix, release, torch)
    options = _collect_options(
        targets, instance_ids, concurrency, max_errors, timeout, python, refresh
    )
    _run_collect(options, output, region, profile)
    result = report_fleet(matrix, output, release=release, torch=torch)
    _show(result, output_format, None, verbose=False)
    raise typer.Exit(result.exit_code)


@app.command("policy")
def policy() -> None:
    """Print the minimal IAM policy (JSON) that 'fleet collect' and 'fleet doctor' need.

    Example: neuron-env fleet policy > fleet-policy.json
    """
    import json as json_module

    from neuron_env.aws.policy import iam_policy

    sys.stdout.write(json_module.dumps(iam_policy("fleet"), indent=2) + "\n")


def _show(result: FleetReport, output_format: str, output: Path | None, verbose: bool) -> None:
    """The report in colour on a terminal for text, else rendered to ``output`` or stdout."""
    from neuron_env.report.fleet import print_fleet, render_fleet

    if output is None and output_format == "text":
        print_fleet(console(), result, verbose=verbose)
    else:
        write_output(output, render_fleet(result, output_format, verbose=verbose))


def _collect_options(
    targets: list[str] | None,
    instance_ids: list[str] | None,
    concurrency: str,
    max_errors: str,
    timeout: int,
    python: str | None,
    refresh: bool,
) -> CollectOptions:
    from neuron_env.fleet.collect import CollectOptions, parse_targets

    ids = tuple(i for value in instance_ids or [] for i in value.split(",") if i)
    for value in (concurrency, max_errors):
        if not value.rstrip("%").isdigit():
            raise BadInput(f"'{value}' is not a count or a percentage such as 50 or 10%.")
    return CollectOptions(
        tags=parse_targets(targets or []),
        instance_ids=ids,
        timeout=timeout,
        concurrency=concurrency,
        max_errors=max_errors,
        python=python,
        refresh=refresh,
    )


def _run_collect(
    options: CollectOptions, output: Path, region: str | None, profile: str | None
) -> CollectResult:
    from neuron_env.cli._common import aws_session
    from neuron_env.fleet.collect import collect
    from neuron_env.fleet.ssm import SsmGateway

    session = aws_session(region, profile)
    gateway = SsmGateway(session.client("ec2"), session.client("ssm"))
    err = console(stderr=True)
    return collect(gateway, options, output, progress=lambda line: err.print(f"[dim]{line}[/]"))


def _print_collect(result: CollectResult, output: Path, as_json: bool) -> None:
    from neuron_env.escape import shell
    from neuron_env.report.text import shown as escape  # hosts' stderr, shown inertly

    if as_json:
        payload = {"directory": str(output), "collected": result.collected,
                   "skipped": result.skipped, "missing": result.missing}  # fmt: skip
        print_json("fleet-collect", payload)
        return
    out = console()
    out.print(
        f"Collected {len(result.collected)} snapshots into {escape(str(output))}"
        f" ({len(result.skipped)} already there; --refresh asks them again)."
    )
    for missing in result.missing:
        out.print(f"  [red]?[/] {escape(missing.name)}: {escape(missing.reason)}")
    if result.missing:
        out.print(f"{len(result.missing)} without a snapshot (recorded in _not-collected.json).")
    out.print(f"Next: neuron-env fleet report {escape(shell(str(output)))}")
