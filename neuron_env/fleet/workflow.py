"""``fleet collect``, ``fleet report`` and ``fleet doctor``: snapshots from many hosts, judged."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.errors import BadInput
from neuron_env.frozen import frozen

if TYPE_CHECKING:
    from neuron_env.fleet.collect import CollectOptions, CollectResult
    from neuron_env.fleet.model import FleetReport
    from neuron_env.fleet.ssm import SsmGateway

#: The SSM gateway, opened only once the request has been checked (it needs AWS credentials).
GatewayFactory = Callable[[], "SsmGateway"]


@frozen(kw_only=True)
class CollectRequest:
    """Which instances to ask through SSM Run Command, how, and where their snapshots go."""

    output: Path
    targets: Sequence[str] = ()
    instance_ids: Sequence[str] = ()
    concurrency: str = "50"
    max_errors: str = "100%"
    timeout: int = 120
    python: str | None = None
    refresh: bool = False
    progress: Callable[[str], None] = field(default=lambda _: None)

    def options(self) -> CollectOptions:
        """The request as :class:`CollectOptions`; a malformed target or count is bad input."""
        from neuron_env.fleet.collect import CollectOptions, parse_targets

        ids = tuple(i for value in self.instance_ids for i in value.split(",") if i)
        for value, least in ((self.concurrency, 1), (self.max_errors, 0)):
            if not _count_or_percentage(value, least):
                raise BadInput(
                    f"'{value[:40]}' is not a count or a percentage such as 50 or 10% "
                    f"(a count from {least} to 999999, a percentage from {least}% to 100%)."
                )
        return CollectOptions(
            tags=parse_targets(self.targets),
            instance_ids=ids,
            timeout=self.timeout,
            concurrency=self.concurrency,
            max_errors=self.max_errors,
            python=self.python,
            refresh=self.refresh,
        )


@frozen(kw_only=True)
class ReportRequest:
    """A folder of snapshots, judged against a release and PyTorch (default: each host's own)."""

    folder: Path
    matrix_dirs: Sequence[Path] = ()
    release: str | None = None
    torch: str | None = None


def collect_fleet(request: CollectRequest, gateway: GatewayFactory) -> CollectResult:
    """Ask the instances for their facts; bad input is said before AWS is reached."""
    from neuron_env.fleet.collect import collect

    options = request.options()
    return collect(gateway(), options, request.output, progress=request.progress)


def report_fleet(request: ReportRequest) -> FleetReport:
    """Judge every snapshot in the folder with the doctor's checks."""
    from neuron_env.fleet.judge import report_fleet as judge_folder
    from neuron_env.matrix import load_matrix

    matrix = load_matrix(list(request.matrix_dirs))
    return judge_folder(matrix, request.folder, release=request.release, torch=request.torch)


@frozen(kw_only=True)
class FleetDoctorRequest:
    """Collect (into ``collect.output``), then judge what arrived."""

    collect: CollectRequest
    matrix_dirs: Sequence[Path] = ()
    release: str | None = None
    torch: str | None = None


def fleet_doctor(request: FleetDoctorRequest, gateway: GatewayFactory) -> FleetReport:
    """Collect, then report on what arrived; an unknown release or PyTorch is said before
    anything runs remotely."""
    from neuron_env.doctor.diagnose import check_request
    from neuron_env.fleet.judge import report_fleet as judge_folder
    from neuron_env.matrix import load_matrix

    matrix = load_matrix(list(request.matrix_dirs))
    check_request(matrix, request.release, request.torch)
    collect_fleet(request.collect, gateway)
    folder = request.collect.output
    return judge_folder(matrix, folder, release=request.release, torch=request.torch)


def _count_or_percentage(value: str, least: int) -> bool:
    """SSM's MaxConcurrency/MaxErrors: a count (at most six digits) or a percentage to 100%."""
    number, percent = value.removesuffix("%"), value.endswith("%")
    if not (number.isascii() and number.isdigit() and len(number) <= 6):
        return False
    return least <= int(number) <= (100 if percent else 999_999)
