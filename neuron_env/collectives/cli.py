"""``neuron-env collectives``: the five collectives over a size sweep, checked and measured."""

from __future__ import annotations

from typing import Annotated

import typer

from neuron_env.cli._common import chosen_format
from neuron_env.cli.options import (
    CollectiveTimeoutOption,
    DistributedBackendOption,
    PeakInstanceTypeOption,
    PythonOption,
    QuietOption,
    RedactOption,
    ReportOutputOption,
    format_option,
)
from neuron_env.errors import BadInput
from neuron_env.output.formats import CollectivesFormat

UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}
#: The largest message a rank is asked to hold (several buffers of it, and a CPU golden): 16 GiB.
MAX_SIZE = 16 * 2**30


def parse_sizes(text: str) -> tuple[int, ...]:
    """``8,1024,1M`` or ``8:1G`` (every power of two from 8 B to 1 GiB) as byte counts."""
    try:
        if ":" in text:
            low, high = (_bytes(part) for part in text.split(":", 1))
            return tuple(low * 2**i for i in range(64) if low * 2**i <= high)
        return tuple(_bytes(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise BadInput(
            f"--sizes {text!r} is not a list of sizes.",
            hint="e.g. --sizes 8,1024,1M or --sizes 8:1G (by x2); suffixes K, M, G (powers of 2); "
            "each from 1 B to 16G.",
        ) from None


def _bytes(part: str) -> int:
    part = part.strip().upper().removesuffix("B")
    unit = part[-1:] if part[-1:] in UNITS else ""
    size = int(part[: len(part) - len(unit)]) * UNITS[unit]
    if not 1 <= size <= MAX_SIZE:  # 0 B measures nothing; past 16 GiB no rank holds it
        raise ValueError(part)
    return size


def _split(text: str | None) -> tuple[str, ...] | None:
    return None if text is None else tuple(p.strip() for p in text.split(",") if p.strip())


def collectives(
    python: PythonOption = None,
    backend: DistributedBackendOption = "neuron",
    ops: Annotated[
        str | None,
        typer.Option(
            "--ops",
            metavar="OPS",
            help="all_reduce, all_gather, reduce_scatter, all_to_all, broadcast.",
        ),
    ] = None,
    sizes: Annotated[
        str | None,
        typer.Option(
            "--sizes", metavar="SIZES", help="Bytes: 8,1024,1M or 8:1G (by x2). Default 8:1G."
        ),
    ] = None,
    dtype: Annotated[
        str,
        typer.Option(
            "--dtype", metavar="DTYPE", help="float32, float16, bfloat16, int32, int64 or int8."
        ),
    ] = "float32",
    iters: Annotated[
        int, typer.Option("--iters", metavar="N", help="Timed iterations per size.")
    ] = 20,
    warmup: Annotated[
        int, typer.Option("--warmup", metavar="N", help="Untimed iterations first.")
    ] = 5,
    timeout: CollectiveTimeoutOption = 300.0,
    nproc_per_node: Annotated[
        int | None,
        typer.Option("--nproc-per-node", metavar="N", help="Start N ranks here with torchrun."),
    ] = None,
    instance_type: PeakInstanceTypeOption = None,
    peak_gbps: Annotated[
        float | None,
        typer.Option(
            "--peak-gbps", metavar="GBPS", help="Compare busbw with this link speed instead."
        ),
    ] = None,
    min_busbw_ratio: Annotated[
        float | None,
        typer.Option(
            "--min-busbw-ratio",
            metavar="RATIO",
            help="Fail on busbw under RATIO of peak (>= 64 MiB).",
        ),
    ] = None,
    slow_rank: Annotated[
        float,
        typer.Option(
            "--slow-rank", metavar="FRACTION", help="Name a rank slower than the median by more."
        ),
    ] = 0.2,
    compare_nccom: Annotated[
        bool,
        typer.Option(
            "--compare-nccom", help="Also run nccom-test on the same sizes (one host): both shown."
        ),
    ] = False,
    output_format: Annotated[
        str, format_option(CollectivesFormat, "text, json, junit or html.")
    ] = "text",
    output: ReportOutputOption = None,
    quiet: QuietOption = False,
    redact: RedactOption = False,
) -> None:
    """All-reduce, all-gather, reduce-scatter, all-to-all and broadcast over a size sweep.

    Every result is checked against a golden computed on the CPU and across ranks; the table has
    nccl-tests' columns (algbw, busbw). Run it under torchrun, srun or mpirun, or on one host with
    --nproc-per-node N. Exit 0 when every value was right and no rank hung or lagged, 1 when one
    failed, 2 on bad input.

    Examples:

      neuron-env collectives --nproc-per-node 2 --python ./venv/bin/python

      srun --ntasks-per-node 16 neuron-env collectives --instance-type trn2.48xlarge

      neuron-env collectives --backend gloo --nproc-per-node 4 --sizes 8,1024,1M

      neuron-env collectives --nproc-per-node 16 --compare-nccom --sizes 1M:1G
    """
    from neuron_env.collectives.output import COLLECTIVES, progress
    from neuron_env.collectives.workflow import OPS, CollectivesRequest, run_collectives
    from neuron_env.output.emit import emit

    request = CollectivesRequest(
        python=python, backend=backend, dtype=dtype, iters=iters, warmup=warmup, timeout=timeout,
        nproc_per_node=nproc_per_node, instance_type=instance_type, peak_gbps=peak_gbps,
        min_busbw_ratio=min_busbw_ratio, slow_rank=slow_rank, compare_nccom=compare_nccom,
        progress=None if quiet else progress,
        ops=_split(ops) or OPS,
        sizes=parse_sizes(sizes) if sizes else None,
    )  # fmt: skip
    choice = chosen_format(CollectivesFormat, output_format)
    result = run_collectives(request)
    if redact:  # each host becomes host-N, in every format
        from neuron_env.redact_text import local_redactor, redact_object

        result = redact_object(result, local_redactor(result.hosts))
    raise typer.Exit(emit(COLLECTIVES, result, choice, output))
