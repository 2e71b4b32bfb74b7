"""``neuron-env collectives``: start the ranks, follow their reports, judge the sweep.

Data flow: request -> the launcher's variables or torchrun here (``launch``) -> the worker on
every rank -> ``step`` / ``hang`` / ``fatal`` lines -> :mod:`figures` -> :class:`CollectivesResult`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import field
from pathlib import Path
from typing import Any

from neuron_env.collectives import crash, figures, launch, nccom, plan
from neuron_env.collectives.models import CollectivesResult, Failure, Peak, Progress
from neuron_env.collectives.peaks import peak_for
from neuron_env.command import LineTimeout, LineTooLong, StreamingCommand
from neuron_env.errors import BadInput, CommandFailed
from neuron_env.frozen import frozen
from neuron_env.progress import ProgressFactory

OPS = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
DTYPES = ("float32", "float16", "bfloat16", "int32", "int64", "int8")
BACKENDS = ("neuron", "gloo", "nccl")
DEFAULT_SIZES = plan.DEFAULT_SIZES
STARTUP_S = 120.0  # torchrun, the imports and the rendezvous, before the first step's timeout
DRAIN_S = 30.0  # for the ranks to end once the job failed, before their group is killed
STDERR_READ = 16 * 1024  # of the job's stderr: torchrun's summary of the failure is at its end

ProgressCallback = Callable[[Progress], None]
#: Opens the display of the sweep's progress (on stderr; entered only while the ranks run).
SweepProgress = ProgressFactory[ProgressCallback]


@frozen
class CollectivesRequest:
    python: Path | None = None
    backend: str = "neuron"
    ops: tuple[str, ...] = OPS
    sizes: tuple[int, ...] | None = None  # None: DEFAULT_SIZES, from each op's smallest valid
    dtype: str = "float32"
    iters: int = 20
    warmup: int = 5
    timeout: float = 300.0
    nproc_per_node: int | None = None
    instance_type: str | None = None
    peak_gbps: float | None = None
    min_busbw_ratio: float | None = None
    slow_rank: float = 0.2
    compare_nccom: bool = False
    progress: SweepProgress | None = None
    environ: dict[str, str] = field(default_factory=lambda: dict(os.environ))


def validate(request: CollectivesRequest) -> None:
    """Bad input before anything starts (exit 2)."""
    for name, allowed, given in (("--backend", BACKENDS, (request.backend,)),
                                 ("--dtype", DTYPES, (request.dtype,)),
                                 ("--ops", OPS, request.ops)):  # fmt: skip
        unknown = [g for g in given if g not in allowed]
        if unknown:
            raise BadInput(f"Unknown {name} value: {', '.join(unknown)}.",
                           hint=f"Choose from: {', '.join(allowed)}.")  # fmt: skip
    if request.sizes is not None and (not request.sizes or min(request.sizes) <= 0):
        raise BadInput("--sizes needs positive byte counts.", hint="e.g. --sizes 8,1024,1M")
    if request.iters < 1 or request.warmup < 0:
        raise BadInput("--iters must be at least 1, --warmup at least 0.")
    _positive("--timeout", request.timeout, "seconds, e.g. --timeout 300")
    if request.peak_gbps is not None:
        _positive("--peak-gbps", request.peak_gbps, "the link's speed in GB/s, e.g. 400")
    if request.min_busbw_ratio is not None:
        _positive("--min-busbw-ratio", request.min_busbw_ratio, "a fraction of peak, e.g. 0.8")
    if not (math.isfinite(request.slow_rank) and request.slow_rank >= 0):
        raise BadInput(f"--slow-rank {request.slow_rank:g} is not a fraction of 0 or more.",
                       hint="e.g. --slow-rank 0.2 (20 % slower than the median rank)")  # fmt: skip
    if request.nproc_per_node is not None and request.nproc_per_node < 1:
        raise BadInput(f"--nproc-per-node {request.nproc_per_node} starts no rank.",
                       hint="Give 1 or more ranks, e.g. --nproc-per-node 2.")  # fmt: skip
    peak_for(request.instance_type, request.peak_gbps, one_host=True)  # an unknown type: exit 2
    if request.compare_nccom:
        nccom.check_comparable(request.ops, request.dtype, one_host=bool(request.nproc_per_node))
        nccom.find_nccom(request.environ)


def _positive(option: str, value: float, valid: str) -> None:
    if not (math.isfinite(value) and value > 0):
        raise BadInput(f"{option} {value:g} is not a positive number.", hint=f"Give {valid}.")


def run_collectives(request: CollectivesRequest) -> CollectivesResult:
    """Run the sweep on every rank and judge it; never raises for what the ranks did."""
    from neuron_env.probe.python_env import find_target_python

    validate(request)
    python = find_target_python(request.python)
    ranks = None if request.nproc_per_node else launch.rank_env(request.environ)
    if ranks is None and not request.nproc_per_node:
        raise BadInput(
            "No launcher variables (RANK/WORLD_SIZE, SLURM_PROCID/SLURM_NTASKS or "
            "OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE) and no --nproc-per-node.",
            hint="Run it under torchrun, srun or mpirun, or on one host: "
            "neuron-env collectives --nproc-per-node 2",
        )
    world = request.nproc_per_node if ranks is None else int(ranks["WORLD_SIZE"])
    assert world is not None
    steps, notes = plan.plan_steps(request.ops, request.sizes, request.dtype, world)
    launch.require_torch(python, request.environ)  # before any table: else every rank fails
    payload = json.dumps(_payload(request, steps))
    if ranks is None:
        argv = launch.torchrun_argv(python, world, launch.free_port(), payload)
        env, rank = dict(request.environ), 0
    else:
        argv = launch.direct_argv(python, payload)
        env = {**request.environ, **ranks}
        rank = int(ranks["RANK"])
    result = CollectivesResult(request.backend, world, request.dtype, rank=rank, notes=notes)
    with request.progress() if request.progress else nullcontext(_quiet) as report:
        per_op = {op: sum(s.op == op for s in steps) for op in request.ops}
        _follow(argv, env, request, result, _Seen([], [], report, per_op))
        if request.compare_nccom:
            _compare_nccom(request, result, report)
    return result


def _quiet(_: Progress) -> None:
    pass


def _compare_nccom(
    request: CollectivesRequest, result: CollectivesResult, report: ProgressCallback
) -> None:
    """nccom-test on the sizes measured, after our ranks have ended (they held the devices)."""
    if not result.rows:
        result.nccom = []
        result.notes.append("nccom-test was not run: the sweep measured nothing to compare")
        return
    assert request.nproc_per_node is not None  # validate() refused --compare-nccom without it
    plan = nccom.NccomPlan(nccom.find_nccom(request.environ), request.nproc_per_node,
                           request.dtype, request.iters, request.warmup, request.timeout,
                           request.environ)  # fmt: skip
    ops = [op for op in dict.fromkeys(r.op for r in result.rows) if op in nccom.NAMES]

    def started(op: str) -> None:
        report(Progress(op, ops.index(op), len(ops)))

    result.nccom, failures = nccom.compare(plan, result.rows, started)
    result.failures += failures


def _payload(request: CollectivesRequest, steps: list[plan.Step]) -> dict[str, Any]:
    return {
        "backend": request.backend, "steps": [s.as_dict() for s in steps],
        "dtype": request.dtype, "iters": request.iters, "warmup": request.warmup,
        "timeout": request.timeout,
    }  # fmt: skip


def _follow(
    argv: list[str],
    env: dict[str, str],
    request: CollectivesRequest,
    result: CollectivesResult,
    seen: _Seen,
) -> None:
    steps, hangs = seen.steps, seen.hangs
    try:
        with StreamingCommand(argv, env=env, max_line=16 * 1024 * 1024) as job:
            _read_events(job, request, result, seen)
            code = job.wait(DRAIN_S)
            tail = job.stderr_tail(STDERR_READ)
    except CommandFailed as exc:
        result.failures.append(Failure("error", exc.message))
        return
    _judge(request, result, steps, hangs)
    if result.rank != 0 and code == 0 and not result.failures:
        result.complete = True  # rank 0 gathers and reports every rank's figures
        result.notes.append(f"rank {result.rank} finished; rank 0 reports the figures")
    if not result.complete and not result.failures:
        result.failures.append(_ended_early(request, result, code, tail))


def _ended_early(
    request: CollectivesRequest, result: CollectivesResult, code: int, tail: str
) -> Failure:
    """The rank that ended the job: torchrun's first observed failure, or (started by another
    launcher) this rank's own exit; else the job's last words."""
    crashed = crash.first_failure(tail) if request.nproc_per_node else None
    if crashed is None and not request.nproc_per_node and code != 0:
        crashed = crash.Crashed(result.rank, os.uname().nodename, code)
    if crashed is not None:
        return Failure("crash", f"rank {crashed.rank} on {crashed.host} {crashed.how()}; "
                       "the other ranks were stopped", rank=crashed.rank,
                       host=crashed.host)  # fmt: skip
    last = tail.strip().splitlines()[-1:] or [f"exit code {code}"]
    return Failure("error", f"the ranks ended early: {last[0]}")


@frozen
class _Seen:
    """What the ranks reported so far, and where each finished step is shown."""

    steps: list[dict[str, Any]]
    hangs: list[dict[str, Any]]
    report: ProgressCallback
    per_op: dict[str, int]  # how many steps each op has

    def step(self, event: dict[str, Any], request: CollectivesRequest, world: int) -> None:
        self.steps.append(event)
        done = sum(s.get("op") == event.get("op") for s in self.steps)
        row = figures.row(event, request.dtype, world, None)
        self.report(Progress(row.op, done, self.per_op.get(row.op, done), row))


def _read_events(
    job: StreamingCommand, request: CollectivesRequest, result: CollectivesResult, seen: _Seen
) -> None:
    silence = request.timeout + STARTUP_S
    while True:
        try:
            line = job.next_line(silence)
        except (LineTimeout, LineTooLong):
            job.kill()
            result.failures.append(Failure(
                "hang", f"no rank reported for {silence:g} s; the job was stopped"))  # fmt: skip
            return
        if line is None:
            return
        event = _parse(line)
        kind = event.get("event")
        if kind == "step":
            seen.step(event, request, result.world_size)
        elif kind == "hang":
            seen.hangs.append(event)
            job.kill()  # the ranks die with torchrun (PR_SET_PDEATHSIG), stopped ones too
        elif kind == "env-mismatch":
            if not any(f.kind == "env" for f in result.failures):
                result.failures.append(figures.env_mismatch(event))
        elif kind == "fatal":
            result.failures.append(Failure("error", _fatal_text(event, request.backend),
                                           rank=event.get("rank")))  # fmt: skip
        elif kind == "done":
            result.complete = True


def _parse(line: str) -> dict[str, Any]:
    if not line.startswith("{"):
        return {}
    try:
        event = json.loads(line)
    except ValueError:
        return {}
    return event if isinstance(event, dict) else {}


def _fatal_text(event: dict[str, Any], backend: str) -> str:
    return f"rank {event.get('rank')} could not join the {backend} job: {event.get('message')}"


def _judge(
    request: CollectivesRequest,
    result: CollectivesResult,
    steps: list[dict[str, Any]],
    hangs: list[dict[str, Any]],
) -> None:
    result.hosts = sorted({r["host"] for s in steps for r in s["ranks"] if r.get("host")})
    result.peak = _peak(request, result)
    result.rows = [figures.row(s, request.dtype, result.world_size, result.peak) for s in steps]
    for step in steps:
        result.failures += figures.wrong_values(step) + figures.mismatched_ranks(step)
    if hangs:
        named = ([h for h in hangs if h.get("missing")] or [h for h in hangs if h.get("stopped")]
                 or hangs)  # fmt: skip
        result.failures.append(figures.hang_failure(named[0]))
    result.failures += figures.slow_ranks(steps, request.slow_rank)
    result.failures += figures.low_busbw(result.rows, request.min_busbw_ratio, result.peak)
    if request.min_busbw_ratio is not None and not any(
        r.size >= figures.LARGE for r in result.rows
    ):
        result.notes.append(f"busbw was not judged: no size reached {figures.LARGE // 2**20} MiB")


def _peak(request: CollectivesRequest, result: CollectivesResult) -> Peak | None:
    return peak_for(request.instance_type, request.peak_gbps, len(result.hosts) <= 1)
