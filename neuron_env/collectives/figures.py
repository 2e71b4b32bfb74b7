"""From the ranks' records to rows and failures: nccl-tests' bandwidths and the judgements.

Pure functions over the worker's ``step`` records (no I/O). algbw is the buffer's size over the
time; busbw scales it by the bytes each rank must move for the op (nccl-tests' PERFORMANCE.md),
so it is comparable with the link's peak whatever the op and the rank count.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from typing import Any

from neuron_env.collectives.models import Failure, Peak, Row

REDOP = {"all_reduce": "sum", "reduce_scatter": "sum"}
LARGE = 64 * 1024 * 1024
"""Bandwidth is judged from this size up: below it a collective measures latency, and an 8-byte
connectivity run must never fail on bandwidth."""


def bus_factor(op: str, world: int) -> float:
    """nccl-tests' factor from algbw to busbw for ``world`` ranks."""
    if op == "all_reduce":
        return 2 * (world - 1) / world
    if op == "broadcast":
        return 1.0
    return (world - 1) / world


def row(step: dict[str, Any], dtype: str, world: int, peak: Peak | None) -> Row:
    times = [r["time_s"] for r in step["ranks"] if not r.get("skipped")]
    median = statistics.median(times) if times else 0.0
    algbw = step["size"] / median / 1e9 if median > 0 else 0.0
    busbw = algbw * bus_factor(step["op"], world)
    return Row(
        op=step["op"], size=step["size"], count=step["count"], dtype=dtype,
        redop=REDOP.get(step["op"], "none"), time_min_s=min(times, default=0.0), time_s=median,
        time_max_s=max(times, default=0.0), algbw=algbw, busbw=busbw,
        wrong=sum((r.get("wrong") or {}).get("wrong", 0) for r in step["ranks"]),
        peak_ratio=busbw / peak.gbytes_per_s if peak and step["size"] else None,
    )  # fmt: skip


def wrong_values(step: dict[str, Any]) -> list[Failure]:
    """Each rank whose output missed the CPU golden: op, size, rank and first bad index."""
    failures = []
    for record in step["ranks"]:
        wrong = record.get("wrong")
        if wrong:
            failures.append(Failure(
                "wrong",
                f"{step['op']} at {step['size']} B: rank {record['rank']} returned "
                f"{wrong['wrong']} wrong element(s), the first at index {wrong['index']} "
                f"(got {_value(wrong['got'])}, expected {_value(wrong['expected'])})",
                rank=record["rank"], op=step["op"], size=step["size"], host=record.get("host"),
            ))  # fmt: skip
    return failures


def _value(value: object) -> str:
    """A value as the worker sent it: a number, or NaN/Inf (and a size mismatch) by name."""
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def mismatched_ranks(step: dict[str, Any]) -> list[Failure]:
    """For ops whose output is the same everywhere: ranks whose output differs from the one most
    ranks hold. Without a strict majority (two ranks that disagree) no rank can be blamed, so the
    disagreement is one failure naming no rank."""
    prints = [(r["rank"], tuple(r["fingerprint"])) for r in step["ranks"] if r.get("fingerprint")]
    counts = Counter(p for _, p in prints)
    if len(counts) < 2:
        return []
    where = {"op": step["op"], "size": step["size"]}
    common, held = counts.most_common(1)[0]
    if 2 * held <= len(prints):
        ranks = ", ".join(str(rank) for rank, _ in prints)
        return [Failure("mismatch", f"{step['op']} at {step['size']} B: ranks {ranks} disagree "
                        "and no majority says which is right", **where)]  # fmt: skip
    return [
        Failure("mismatch", f"{step['op']} at {step['size']} B: rank {rank}'s output differs "
                f"from the other ranks'", rank=rank, **where)
        for rank, p in prints if p != common
    ]  # fmt: skip


MIN_SLOW_STEPS = 3  # a rank is called slow from its median over at least this many steps


def slow_ranks(steps: Sequence[dict[str, Any]], threshold: float) -> list[Failure]:
    """Ranks slower than the median rank by more than ``threshold`` (0.2: 20 %), judged on the
    median over the steps of the rank's time over the step's median (one noisy step is not a
    slow rank)."""
    ratios: dict[int, list[float]] = {}
    for step in steps:
        records = [r for r in step["ranks"] if not r.get("skipped")]
        median = statistics.median(r["time_s"] for r in records) if records else 0.0
        for record in records if median > 0 else []:
            ratios.setdefault(record["rank"], []).append(record["time_s"] / median)
    failures = []
    for rank, values in sorted(ratios.items()):
        if len(values) < MIN_SLOW_STEPS:
            continue  # e.g. the steps before a hang: too few to tell a slow rank from noise
        typical = statistics.median(values)
        if typical > 1 + threshold:
            failures.append(Failure(
                "slow-rank",
                f"rank {rank} is {100 * (typical - 1):.0f} % slower than the median rank "
                f"(median over {len(values)} steps; limit {100 * threshold:.0f} %)",
                rank=rank,
            ))  # fmt: skip
    return failures


def low_busbw(rows: Sequence[Row], minimum: float | None, peak: Peak | None) -> list[Failure]:
    """Rows at :data:`LARGE` sizes and above whose busbw is under ``minimum`` of the peak."""
    if minimum is None or peak is None:
        return []
    return [
        Failure("low-busbw", f"{r.op} at {r.size} B: busbw {r.busbw:.2f} GB/s is "
                f"{100 * (r.peak_ratio or 0):.1f} % of {peak.label}, under the "
                f"{100 * minimum:.0f} % asked for", op=r.op, size=r.size)
        for r in rows if r.size >= LARGE and (r.peak_ratio or 0) < minimum
    ]  # fmt: skip


def hang_failure(event: dict[str, Any]) -> Failure:
    """The watchdog's report: the ranks that never reached the step, else those whose process
    stopped running (no heartbeat: SIGSTOP, a frozen interpreter), else those stuck in it."""
    where = f"{event['op']} at {event['size']} B"
    missing, stopped = event.get("missing") or [], event.get("stopped") or []
    if event.get("error") and (stopped or missing):
        gone = stopped or missing
        text = f"{where}: rank {', '.join(str(r) for r in gone)} left the job (no heartbeat"
        text += ", never reached the collective" if missing else ""
        text += f"); rank {event['rank']}'s collective failed at once: {event['error']}"
        return Failure("hang", text, rank=gone[0], op=event["op"], size=event["size"])
    if missing:
        names = ", ".join(str(r) for r in missing)
        text = f"{where}: rank {names} did not answer within {event['timeout']:g} s (never "
        text += "reached the collective); the job was stopped"
        return Failure("hang", text, rank=missing[0], op=event["op"], size=event["size"])
    if stopped:
        names = ", ".join(str(r) for r in stopped)
        text = f"{where}: rank {names} stopped running (no heartbeat: its process was stopped, "
        text += f"e.g. SIGSTOP, froze or ended) and did not answer within {event['timeout']:g} s; "
        text += "the job was stopped"
        return Failure("hang", text, rank=stopped[0], op=event["op"], size=event["size"])
    stuck = event.get("unfinished") or []
    names = ", ".join(str(r) for r in stuck) or "?"
    text = f"{where}: every rank reached it but rank {names} did not finish within "
    text += f"{event['timeout']:g} s; the job was stopped"
    return Failure("hang", text, rank=stuck[0] if stuck else None, op=event["op"],
                   size=event["size"])  # fmt: skip


def env_mismatch(event: dict[str, Any]) -> Failure:
    """A setting the ranks must share differs: each value with the ranks holding it, the odd
    ones (those not holding the most common value) named."""
    groups = sorted(event["values"].items(), key=lambda item: (-len(item[1]), item[1]))
    odd = sorted(r for _, ranks in groups[1:] for r in ranks)
    said = "; ".join(
        f"{repr(value) if value else 'unset'} on rank{'s' if len(ranks) > 1 else ''} "
        f"{_ranks(ranks)}"
        for value, ranks in groups
    )
    text = f"{event['variable']} differs across ranks ({said}): rank {_ranks(odd)} differ(s); "
    text += "every rank must have the same value (or none), else the Neuron runtime fails with "
    text += "'Nrt::BuildGlobalComm failed'. Nothing was run."
    return Failure("env", text, rank=odd[0] if odd else None)


def _ranks(ranks: Sequence[int]) -> str:
    shown = ", ".join(str(r) for r in ranks[:16])
    return shown + (f" and {len(ranks) - 16} more" if len(ranks) > 16 else "")
