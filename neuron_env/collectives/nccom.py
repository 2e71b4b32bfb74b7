"""``--compare-nccom``: Neuron's ``nccom-test`` on the sizes we measured, beside our figures.

nccom-test (aws-neuronx-tools; ``tools/neuron-sys-tools/nccom-test.rst``) runs one collective per
invocation over a size range (``-b``/``-e``, ``-f`` factor) on ``-r`` ranks of ``-N`` nodes and
writes its results with ``--report-to-json-file``. Its GB/s are GiB/s (its docs: "1GiB =
1,073,741,824 bytes"); ours are nccl-tests' 10^9 B/s, so its figures are converted here. It runs
on this host only, after our own ranks have ended (they held the devices): across hosts it needs
its own MPI or Slurm launch, which neuron-env does not make for it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from pathlib import Path

from neuron_env.collectives.models import Failure, NccomOp, NccomRow, Row
from neuron_env.collectives.nccom_report import Measured, parse_report, parse_table
from neuron_env.command import run
from neuron_env.errors import BadInput, CommandFailed
from neuron_env.escape import terminal
from neuron_env.frozen import frozen
from neuron_env.input_files import InputRejected, Limits, load_json, read_tail

EXECUTABLE = "nccom-test"
# Our op names -> nccom-test's (its docs list allr, allg, redsct, alltoall; it has no broadcast).
NAMES = {"all_reduce": "allr", "all_gather": "allg", "reduce_scatter": "redsct",
         "all_to_all": "alltoall"}  # fmt: skip
# Our dtypes -> nccom-test's --datatype (it has no 64-bit type).
TYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int32": "int32", "int8": "int8"}
HINT = "nccom-test comes with the aws-neuronx-tools package (/opt/aws/neuron/bin: add it to PATH)."
REPORT_LIMITS = Limits(max_bytes=4 * 2**20, max_string=4096)
TABLE_BYTES = 2**20  # of its log, where the table is read when no JSON report was written
TAIL_LINES = 3


@frozen
class NccomPlan:
    """How nccom-test is run: ``nproc`` ranks on this host, our dtype, iterations and warm-up,
    ``timeout`` seconds per size, in ``environ`` (the user's, for the Neuron runtime's settings)."""

    executable: Path
    nproc: int
    dtype: str
    iters: int
    warmup: int
    timeout: float
    environ: Mapping[str, str]


class _Stopped(Exception):
    """nccom-test failed on an op; ``final`` when later ops should not be tried (it hung)."""

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.final = final


def find_nccom(environ: Mapping[str, str]) -> Path:
    """nccom-test on ``environ``'s PATH; not there is bad input (the comparison was asked for)."""
    found = shutil.which(EXECUTABLE, path=environ.get("PATH", ""))
    if found is None:
        raise BadInput("--compare-nccom: nccom-test is not on PATH.", hint=HINT)
    return Path(found)


def check_comparable(ops: Sequence[str], dtype: str, one_host: bool) -> None:
    """Bad input when nothing could be compared: across hosts, an unknown type, no shared op."""
    if not one_host:
        raise BadInput(
            "--compare-nccom runs nccom-test on this host, beside ranks started with "
            "--nproc-per-node; under torchrun, srun or mpirun the job may span hosts, which "
            "nccom-test reaches only through its own MPI or Slurm launch.",
            hint="Run neuron-env collectives --nproc-per-node N --compare-nccom on one host, or "
            "nccom-test -r RANKS -N NODES --hosts ... (its MPI mode) yourself.",
        )
    if dtype not in TYPES:
        raise BadInput(f"--compare-nccom: nccom-test has no {dtype}.",
                       hint=f"Choose --dtype {', '.join(TYPES)}.")  # fmt: skip
    if not any(op in NAMES for op in ops):
        raise BadInput(f"--compare-nccom: nccom-test runs none of {', '.join(ops)}.",
                       hint=f"It runs {', '.join(NAMES)}.")  # fmt: skip


def compare(
    plan: NccomPlan, rows: Sequence[Row], started: Callable[[str], None]
) -> tuple[list[NccomOp], list[Failure]]:
    """nccom-test on every op of ``rows`` it has, at the sizes measured; ``started(op)`` as each
    begins. Its failures are returned, never raised; after a hang the other ops are not tried."""
    entries: list[NccomOp] = []
    failures: list[Failure] = []
    stopped = ""
    for op, op_rows in _by_op(rows).items():
        name = NAMES.get(op)
        if name is None or stopped:
            why = stopped or f"not run by nccom-test (it has no {op})"
            entries.append(NccomOp(op, "not-run", name, why))
            continue
        started(op)
        try:
            entries.append(NccomOp(op, "ran", name, rows=_run_op(plan, name, op_rows)))
        except _Stopped as exc:
            entries.append(NccomOp(op, "failed", name, exc.message))
            failures.append(Failure("nccom", exc.message, op=op))
            stopped = f"not run: nccom-test {name} did not finish" if exc.final else ""
    return entries, failures


def _by_op(rows: Sequence[Row]) -> dict[str, list[Row]]:
    grouped: dict[str, list[Row]] = {}
    for row in rows:
        if row.count:  # a size too small for the ranks measured nothing
            grouped.setdefault(row.op, []).append(row)
    return grouped


def _run_op(plan: NccomPlan, name: str, rows: Sequence[Row]) -> tuple[NccomRow, ...]:
    sizes = [r.size for r in rows]
    measured: dict[int, Measured] = {}
    for low, high, factor in size_runs(sizes):
        wanted = [s for s in sizes if low <= s <= high]
        results = _run_once(plan, name, (low, high, factor), timeout=plan.timeout * len(wanted))
        measured.update(_match(wanted, results))
    return tuple(_nccom_row(row, measured[row.size]) for row in rows if row.size in measured)


def size_runs(sizes: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first, last, factor) per nccom-test run: one for a sweep by a whole factor (8:1G), else
    one per size."""
    ordered = sorted(set(sizes))
    factors = {b // a for a, b in pairwise(ordered) if b % a == 0}
    steps = len(ordered) - 1
    if steps and len(factors) == 1 and ordered[0] * min(factors) ** steps == ordered[-1]:
        return [(ordered[0], ordered[-1], min(factors))]
    return [(size, size, 2) for size in ordered]


def nccom_argv(
    plan: NccomPlan, name: str, low: int, high: int, factor: int, report: Path
) -> list[str]:
    """One nccom-test run of op ``name`` from ``low`` to ``high`` bytes by ``factor``."""
    return [
        str(plan.executable), "-r", str(plan.nproc), "-N", "1", "-b", str(low), "-e", str(high),
        "-f", str(factor), "-n", str(plan.iters), "-w", str(plan.warmup),
        "-d", TYPES[plan.dtype], "--non-interactive", "--report-to-json-file", str(report), name,
    ]  # fmt: skip


def _run_once(
    plan: NccomPlan, name: str, sweep: tuple[int, int, int], timeout: float
) -> list[Measured]:
    """One run of nccom-test; :class:`_Stopped` when it failed, hung or printed no result."""
    with tempfile.TemporaryDirectory(prefix="neuron-env-nccom-") as tmp:
        report, log = Path(tmp) / "report.json", Path(tmp) / "nccom-test.log"
        argv = nccom_argv(plan, name, *sweep, report)
        try:
            done = run(argv, timeout=timeout, env=dict(plan.environ),
                       cwd=Path(tmp), check=False, output=log)  # fmt: skip
        except CommandFailed as exc:  # it hung (killed at the timeout) or could not start
            message = _said(f"nccom-test {name}: {exc.message}", exc.output)
            raise _Stopped(message, final=True) from None
        if done.returncode != 0:
            what = f"nccom-test {name} failed with exit code {done.returncode}"
            raise _Stopped(_said(what, done.stdout))
        results = _results(report, log)
        if not results:
            raise _Stopped(_said(f"nccom-test {name} printed no result table", done.stdout))
        return results


def _results(report: Path, log: Path) -> list[Measured]:
    """Its JSON report, else the table in its output; [] when neither holds a result."""
    try:
        found = parse_report(load_json(report, REPORT_LIMITS))
    except InputRejected:  # not written (an older nccom-test) or not its format
        found = []
    if found:
        return found
    try:
        return parse_table(read_tail(log, TABLE_BYTES).decode("utf-8", errors="replace"))
    except InputRejected:
        return []


def _match(wanted: Sequence[int], results: Sequence[Measured]) -> dict[int, Measured]:
    """Its results by our sizes: the same size, else (when it reports another size for each,
    having rounded them) the same place in the sweep."""
    exact = {m.size: m for m in results if m.size in wanted}
    if exact or len(results) != len(wanted):
        return exact
    return dict(zip(wanted, results, strict=True))


def _nccom_row(row: Row, measured: Measured) -> NccomRow:
    busbw = measured.busbw_gib * 2**30 / 1e9
    ratio = row.busbw / busbw if busbw > 0 else None
    algbw = measured.algbw_gib * 2**30 / 1e9
    return NccomRow(row.size, measured.time_us / 1e6, algbw, busbw, ratio)


def _said(what: str, output: str) -> str:
    """``what``, then the last lines nccom-test wrote (made safe to print), less our own command
    line and its table's header."""
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    lines = [line for line in lines if not line.startswith(("$ ", "size(B)"))][-TAIL_LINES:]
    tail = terminal(" | ".join(lines))[:600]
    return f"{what}; it said: {tail}" if tail else f"{what}; it printed nothing"
