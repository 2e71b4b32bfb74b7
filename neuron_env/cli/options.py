"""Every flag that more than one command takes, declared once, so that its help and metavar agree
wherever it appears (a test keeps a flag out of two modules). A flag only one command takes is
declared in that command's own module (``<package>/cli.py``).

Metavars follow one style: a placeholder in capitals (PATH, FILE, DIR, VERSION, X.Y, SECONDS,
URL ...), a literal value as it is typed (``0|1|2``, ``dlami|ubuntu``). Where one flag means
different things in different commands (``--timeout`` of a case, of a host, of a request), each
meaning has its own name here, beside the others.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from neuron_env.cli._common import format_choice, json_flag, seconds_at_least
from neuron_env.output.formats import DocumentFormat, FleetFormat, OutputFormat, ReportFormat


def format_option(formats: type[OutputFormat], help: str) -> Any:  # typer.Option's own type
    """``--format`` for a command whose formats enum is ``formats``; ``help`` names its members.

    Eager, so that an error found later is still written in the format asked for.
    """
    return typer.Option(
        "--format", metavar="FORMAT", is_eager=True, callback=format_choice(formats), help=help
    )


PythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Target interpreter (default: the active virtualenv, else neuron-env's own).",
        dir_okay=False,
    ),
]


def seconds_option(flag: str, help: str, at_least: float = 1) -> Any:  # typer.Option's own type
    """A flag that takes a number of seconds, finite and at least ``at_least``."""
    return typer.Option(flag, callback=seconds_at_least(at_least), metavar="SECONDS", help=help)


ProbeTimeoutOption = Annotated[
    float,
    seconds_option("--probe-timeout", "Give each probe at most this many seconds.", at_least=0.5),
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
    typer.Option("--release", metavar="VERSION", help="Judge against this Neuron release."),
]
JudgeTorchOption = Annotated[
    str | None,
    typer.Option("--torch", metavar="X.Y", help="Judge against this PyTorch minor, e.g. 2.14."),
]
# ... and what it builds or looks up (matrix, scan, launch-template, ami, image).
ReleaseOption = Annotated[
    str | None,
    typer.Option(
        "--release",
        metavar="VERSION",
        help="Neuron release, e.g. 2.33.1 (default: the latest).",
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
    str, format_option(DocumentFormat, "text or json (the versioned JSON envelope).")
]
ReportFormatOption = Annotated[str, format_option(ReportFormat, "text, json, junit or github.")]
FleetFormatOption = Annotated[str, format_option(FleetFormat, "text, json, junit, github or html.")]


def _dash_is_stdout(value: Path | None) -> Path | None:
    """``-o -`` is stdout, as for most tools (it made a file named ``-``)."""
    return None if value is not None and str(value) == "-" else value


ReportOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write the report to FILE instead of stdout ('-': stdout).",
        dir_okay=False,
        callback=_dash_is_stdout,
    ),
]
DocumentOutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="FILE",
        help="Write to FILE instead of stdout ('-': stdout).",
        dir_okay=False,
        callback=_dash_is_stdout,
    ),
]
SnapshotsOption = Annotated[
    Path, typer.Option("--output", "-o", metavar="DIR", help="Snapshots go here.")
]

# smoke, selftest and evaluate: the worker in the target interpreter, and its report.
DeviceOption = Annotated[
    str, typer.Option("--device", metavar="DEVICE", help="neuron, neuron:N, cpu, cuda or cuda:N.")
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")]
RepeatsOption = Annotated[
    int, typer.Option("--repeats", min=1, metavar="N", help="Timed repeats after the first call.")
]
VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose", "-v", help="Show every detail (each check, host, tensor or op), not a summary."
    ),
]
# Each command's own time limit: one flag, several meanings, all in seconds.
CaseTimeoutOption = Annotated[
    float, seconds_option("--timeout", "Seconds each case (and the worker's start) may take.")
]
StageTimeoutOption = Annotated[
    float,
    seconds_option(
        "--timeout", "Seconds each stage may take (loading, eager, compile, each shape)."
    ),
]
HostTimeoutOption = Annotated[
    int,
    typer.Option("--timeout", min=30, metavar="SECONDS", help="How long each host may take."),
]
RequestTimeoutOption = Annotated[
    float,
    typer.Option("--timeout", metavar="SECONDS", min=0.1, help="Wait per request."),
]
CheckTimeoutOption = Annotated[
    float,
    typer.Option(
        "--timeout", metavar="SECONDS", help="With --emit: stop the whole check after this."
    ),
]
AllowFallbackOption = Annotated[
    bool, typer.Option("--allow-fallback", help="Do not fail on ops that fell back to CPU.")
]
CompileBackendOption = Annotated[
    str | None,
    typer.Option(
        "--compile-backend",
        metavar="BACKEND",
        help="torch.compile backend (default: neuron on neuron, aot_eager on cpu, inductor "
        "on cuda).",
    ),
]


def _lower(value: str | None) -> str | None:
    """An OS id (``Ubuntu-26.04``) or instance type (``TRN2.48XLARGE``) as written everywhere
    else: lower case (/etc/os-release and EC2 spell them so), without the spaces around it."""
    return value.strip().lower() if value is not None else None


# launch-template, ami and image render: the host (or image) being described.
_torch = typer.Option("--torch", metavar="X.Y", help="PyTorch minor, e.g. 2.14.")
TorchOption = Annotated[str, _torch]
InstallTorchOption = Annotated[str | None, _torch]  # --system needs none
OsOption = Annotated[
    str | None,
    typer.Option(
        "--os",
        metavar="ID-VERSION",
        callback=_lower,
        help="OS as ID-VERSION of /etc/os-release, e.g. ubuntu-26.04 (default: the newest OS "
        "with pip wheels).",
    ),
]
InstallOsOption = Annotated[
    str | None,
    typer.Option(
        "--os",
        metavar="ID-VERSION",
        callback=_lower,
        help="OS as ID-VERSION of /etc/os-release, e.g. ubuntu-26.04 (default: this host's).",
    ),
]
ResolveOsOption = Annotated[
    str | None,
    typer.Option(
        "--os",
        metavar="ID-VERSION",
        callback=_lower,
        help="OS as ID-VERSION of /etc/os-release, e.g. ubuntu-26.04.",
    ),
]


def _deprecated_python(value: str | None) -> str | None:
    """``--python X.Y`` still works for scripts written before ``--python-version``; it says so."""
    if value is not None:
        sys.stderr.write(
            "neuron-env: --python X.Y is deprecated for 'matrix resolve' (elsewhere --python is "
            "an interpreter's path): use --python-version X.Y.\n"
        )
    return value


# matrix resolve's old spelling of --python-version, declared here with the other --python flags.
DeprecatedPythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="X.Y",
        hidden=True,
        callback=_deprecated_python,
        help="Deprecated: --python-version.",
    ),
]
# --python-version: a Python version (X.Y) wherever it is taken; --python is an interpreter.
NewVenvPythonVersionOption = Annotated[
    str | None,
    typer.Option(
        "--python-version",
        metavar="X.Y",
        help="With a new --venv: the pairing's Python to create it with, e.g. 3.12 (found on "
        "PATH, in pyenv or among uv's Pythons).",
    ),
]
WheelhousePythonVersionOption = Annotated[
    str | None,
    typer.Option(
        "--python-version",
        metavar="X.Y",
        help="Python of the machine that will install, e.g. 3.12 (default: this host's).",
    ),
]
ResolvePythonVersionOption = Annotated[
    str | None,
    typer.Option("--python-version", metavar="X.Y", help="Python version, e.g. 3.12."),
]
InstallPythonOption = Annotated[
    Path | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="Interpreter of the environment to upgrade; with a new --venv, the one to create it "
        "with.",
    ),
]
FleetPythonOption = Annotated[
    str | None,
    typer.Option(
        "--python",
        metavar="PATH",
        help="The Python environment to inspect on the hosts (default: the bootstrap's venv).",
    ),
]
InstallSysrootOption = Annotated[
    # Hidden: the apt-step tests plan for a chosen OS with a writable /etc/apt, without root.
    Path,
    typer.Option(
        "--sysroot", hidden=True, metavar="DIR", help="Read host files under this directory."
    ),
]
RequirementOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--requirement",
        "-r",
        metavar="FILE",
        help="Your packages from a requirements file, one a line (repeatable; no option lines).",
        dir_okay=False,
        show_default=False,
    ),
]
RedactOption = Annotated[
    bool,
    typer.Option(
        "--redact",
        help="Replace what identifies a host or a person (host names, instance and account ids, "
        "addresses and ports, keys, tokens, user names and home paths); versions, OS, instance "
        "type and region stay.",
    ),
]
NoConfigOption = Annotated[
    bool,
    typer.Option(
        "--no-config",
        help="Ignore project files (neuron-env.toml, [tool.neuron-env]); or NEURON_ENV_NO_CONFIG=1",
    ),
]
StrictOption = Annotated[bool, typer.Option("--strict", help="Warnings fail too (exit 1).")]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Say what would change, and change nothing.")
]
YesOption = Annotated[bool, typer.Option("--yes", "-y", help="Do not ask for confirmation.")]
# scan --fix: the same two questions, asked of the rewrite.
FixDryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="With --fix: show the diff, write nothing.")
]
FixYesOption = Annotated[
    bool, typer.Option("--yes", "-y", help="With --fix: write without asking.")
]
InstallQuietOption = Annotated[
    bool, typer.Option("--quiet", "-q", help="No plan and no progress: errors only (for scripts).")
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
        metavar="URL",
        help="Default index (mirror) for everything that is not routed "
        "(default: the backend's configuration).",
    ),
]
NeuronIndexOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-index",
        metavar="URL",
        help="Mirror of the Neuron index (torch-neuronx, neuronx-cc, nki).",
    ),
]
PytorchIndexOption = Annotated[
    str | None,
    typer.Option("--pytorch-index", metavar="URL", help="Mirror of the PyTorch CPU index (torch)."),
]

# launch-template render/create and ami render: the host and where it launches.
_instance_type = typer.Option(
    "--instance-type",
    metavar="TYPE",
    callback=_lower,
    help="EC2 instance type, e.g. trn2.48xlarge.",
)
InstanceTypeOption = Annotated[str, _instance_type]
AnyInstanceTypeOption = Annotated[str | None, _instance_type]
BuilderInstanceTypeOption = Annotated[
    str,
    typer.Option(
        "--instance-type",
        metavar="TYPE",
        callback=_lower,
        help="Builder instance type (a Trainium instance: the build runs neuron-env doctor).",
    ),
]
PeakInstanceTypeOption = Annotated[
    str | None,
    typer.Option(
        "--instance-type",
        metavar="TYPE",
        callback=_lower,
        help="Instance type for the peak, e.g. trn2.48xlarge.",
    ),
]
DoctorLevelOption = Annotated[
    int,
    typer.Option(
        "--level",
        min=0,
        max=2,
        metavar="0|1|2",
        help="Device level, a number (selftest's --level names a suite instead): 0: host and "
        "environment; 1: also the device smoke test; 2: also the standard self-test.",
    ),
]
PreflightLevelOption = Annotated[
    int | None,
    typer.Option(
        "--level",
        min=0,
        max=2,
        metavar="0|1|2",
        help="Device level, a number as doctor's: 0: host and environment; 1 (default): also the "
        "device smoke test; 2: also the standard self-test. The Slurm health check defaults to 0.",
    ),
]
# selftest's levels are suites, not doctor's device levels; the enum is the command's own.
SelftestLevelOption = typer.Option(
    "--level",
    metavar="quick|standard|long",
    help="The suite, by name (doctor's --level is a number, its device level): quick: ops, "
    "training, beta behaviours; standard: + 2-process all-reduce; long: + sustained matmul and "
    "copy bandwidth.",
)
BootLevelOption = Annotated[
    int,
    typer.Option(
        "--level",
        min=0,
        max=2,
        metavar="0|1|2",
        help="Boot-time neuron-env doctor level, doctor's device level (0: host and environment; "
        "1 adds a device smoke test; 2 the standard self-test).",
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
ImageSourceOption = Annotated[
    str | None,
    typer.Option(
        "--neuron-env-source",
        metavar="URL|pypi",
        help="Where the build gets neuron-env (required): a wheel or wheelhouse URL with "
        "--neuron-env-sha256, or pypi (the build's configured index).",
    ),
]
AmiBaseOption = Annotated[
    str,
    typer.Option(
        "--base", metavar="dlami|ubuntu", help="Start from the Neuron DLAMI or from plain Ubuntu."
    ),
]
ImageBaseOption = Annotated[
    str | None,
    typer.Option("--base", metavar="IMAGE", help="Base image (default: ubuntu:VERSION of --os)."),
]
RecipeDirOption = Annotated[
    Path,
    typer.Option(
        "--output", "-o", metavar="DIR", help="Directory for the recipe.", file_okay=False
    ),
]
PreflightOutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        metavar="PATH",
        help="A FILE for the report, or a DIR/ that receives it plus preflight.json.",
    ),
]
RegionOption = Annotated[
    str | None, typer.Option("--region", metavar="REGION", help="AWS region (default: boto3's).")
]
ProfileOption = Annotated[
    str | None, typer.Option("--profile", metavar="NAME", help="AWS profile (default: boto3's).")
]

# install's package installer and collectives' torch.distributed backend: two meanings of
# --backend, each declared once here.
InstallBackendOption = Annotated[
    str,
    typer.Option(
        "--backend", metavar="auto|uv|pip", help="auto (uv when available, else pip), uv or pip."
    ),
]
DistributedBackendOption = Annotated[
    str,
    typer.Option("--backend", metavar="neuron|gloo|nccl", help="neuron, gloo (CPU) or nccl."),
]
CollectiveTimeoutOption = Annotated[
    float,
    typer.Option("--timeout", metavar="SECONDS", help="Per op and size; a hung rank ends the job."),
]
