"""Options that several commands take, declared once so that their flags and help agree."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from neuron_env.cli._common import format_choice, json_flag, seconds_at_least
from neuron_env.output.formats import DocumentFormat, ReportFormat

PythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Target interpreter (default: the active virtualenv, else neuron-env's own).",
        dir_okay=False,
    ),
]
ProbeTimeoutOption = Annotated[
    float,
    typer.Option(
        "--probe-timeout",
        callback=seconds_at_least(0.5),
        metavar="SECONDS",
        help="Give each probe at most this many seconds.",
    ),
]
SysrootOption = Annotated[
    Path,
    typer.Option(
        "--sysroot",
        metavar="DIR",
        help="Read the host through this directory (e.g. /host from a container).",
        file_okay=False,
    ),
]

# What a command judges against (doctor, preflight, fleet) ...
JudgeReleaseOption = Annotated[
    str | None,
    typer.Option("--release", metavar="R", help="Judge against this Neuron release."),
]
JudgeTorchOption = Annotated[
    str | None,
    typer.Option("--torch", metavar="X.Y", help="Judge against this PyTorch minor, e.g. 2.14."),
]
# ... and what it builds or looks up (matrix, scan, launch-template, ami, image).
ReleaseOption = Annotated[
    str | None,
    typer.Option(
        "--release", metavar="R", help="Neuron release, e.g. 2.33.1 (default: the latest)."
    ),
]

JsonOption = Annotated[
    bool,
    typer.Option(
        "--json",
        is_eager=True,
        callback=json_flag,
        help="Print the versioned JSON envelope (the same as --format json).",
    ),
]
DocumentFormatOption = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="FORMAT",
        is_eager=True,
        callback=format_choice(DocumentFormat),
        help="text or json (the versioned JSON envelope).",
    ),
]
ReportFormatOption = Annotated[
    str,
    typer.Option(
        "--format",
        metavar="FORMAT",
        is_eager=True,
        callback=format_choice(ReportFormat),
        help="text, json, junit or github.",
    ),
]
ReportOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to FILE instead of stdout.",
        dir_okay=False,
    ),
]
DocumentOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output", "-o", metavar="FILE", help="Write to FILE instead of stdout.", dir_okay=False
    ),
]
SnapshotsOption = Annotated[
    Path, typer.Option("--output", "-o", metavar="DIR", help="Snapshots go here.")
]

# smoke, selftest and evaluate: the worker in the target interpreter, and its report.
WorkerPythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        help="Target interpreter (default: the active virtualenv, else neuron-env's own).",
        dir_okay=False,
    ),
]
DeviceOption = Annotated[
    str, typer.Option("--device", help="neuron, neuron:N, cpu, cuda or cuda:N.")
]
WorkerOutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write the report to FILE.", dir_okay=False)
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")]
RepeatsOption = Annotated[
    int, typer.Option("--repeats", min=1, help="Timed repeats after the first call.")
]
AllowFallbackOption = Annotated[
    bool, typer.Option("--allow-fallback", help="Do not fail on ops that fell back to CPU.")
]
CompileBackendOption = Annotated[
    str | None,
    typer.Option(
        "--compile-backend",
        help="torch.compile backend (default: neuron on neuron, aot_eager on cpu, inductor "
        "on cuda).",
    ),
]

# launch-template, ami and image render: the host (or image) being described.
HostTorchOption = Annotated[
    str, typer.Option("--torch", metavar="X.Y", help="PyTorch minor for the host, e.g. 2.14.")
]
OsOption = Annotated[
    str | None,
    typer.Option(
        "--os",
        metavar="ID-VERSION",
        help="Host OS, e.g. ubuntu-26.04 (default: the newest OS with pip wheels).",
    ),
]
Sha256Option = Annotated[
    str | None,
    typer.Option(
        "--neuron-env-sha256",
        metavar="HEX",
        help="sha256 of the --neuron-env-source file; the host refuses anything else.",
    ),
]
SpecOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-env-spec",
        metavar="SPEC",
        help="With --neuron-env-source pypi: what the host pip-installs "
        "(default: this version, neuron-env==VERSION).",
    ),
]

# install, download and image render: mirrors of the indexes.
IndexUrlOption = Annotated[
    str | None,
    typer.Option(
        "--index-url",
        help="Default index (mirror) for everything that is not routed "
        "(default: the backend's configuration).",
    ),
]
NeuronIndexOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-index", help="Mirror of the Neuron index (torch-neuronx, neuronx-cc, nki)."
    ),
]
PytorchIndexOption = Annotated[
    str | None, typer.Option("--pytorch-index", help="Mirror of the PyTorch CPU index (torch).")
]

# launch-template render/create and ami render: the host and where it launches.
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
BootLevelOption = Annotated[
    int,
    typer.Option(
        "--level",
        min=0,
        max=2,
        metavar="0|1|2",
        help="Boot-time neuron-env doctor level (1 adds a device smoke test).",
    ),
]
HostSourceOption = Annotated[
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
