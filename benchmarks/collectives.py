"""How much does `neuron-env collectives` add to the all-reduce it times?

Runs, side by side on gloo with the same process count, sizes, warm-up and iterations:

* the harness: `neuron-env collectives --backend gloo --nproc-per-node N --ops all_reduce`, as a
  user runs it; its figure per size is the report's time (median over ranks of each rank's median
  iteration; each iteration starts after an untimed barrier, and the value is checked after);
* the baseline: a bare `torch.distributed.all_reduce` loop under torchrun, as one would write it by
  hand (warm-up, barrier, then `iters` back-to-back calls, each timed), its figure per size the
  same statistic: the median over ranks of each rank's median call.

Prints the ratio harness / bare per size (the target: <= 1.05x from 1 MiB up), then the wall time
of each whole run. Usage: python benchmarks/collectives.py [--python PATH] [--nproc 2]
[--sizes 8,1K,...] [--iters 20] [--warmup 5] [--runs 1]
PATH defaults to $NEURON_ENV_TEST_TORCH_VENV/bin/python, else .venv-torch/bin/python.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
NEURON_ENV = Path(sys.executable).with_name("neuron-env")
SIZES = "8,1K,64K,1M,4M,16M,64M"

# The loop by hand: every rank writes rank-N.json, {size: its median call, in seconds}.
BARE = """
import json, os, sys, time
import torch, torch.distributed as dist

dist.init_process_group("gloo")
sizes, warmup, iters = json.loads(sys.argv[1])
times = {}
for size in sizes:
    tensor = torch.ones(size // 4, dtype=torch.float32)
    for _ in range(warmup):
        dist.all_reduce(tensor)
    dist.barrier()
    calls = []
    for _ in range(iters):
        start = time.perf_counter()
        dist.all_reduce(tensor)
        calls.append(time.perf_counter() - start)
    times[size] = sorted(calls)[len(calls) // 2]
with open(os.path.join(sys.argv[2], f"rank-{dist.get_rank()}.json"), "w") as out:
    json.dump(times, out)
dist.destroy_process_group()
"""


def default_python() -> Path:
    venv = os.environ.get("NEURON_ENV_TEST_TORCH_VENV") or str(REPO / ".venv-torch")
    return Path(venv) / "bin" / "python"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def harness(args: argparse.Namespace) -> tuple[dict[int, float], float]:
    argv = [str(NEURON_ENV), "collectives", "--backend", "gloo", "--nproc-per-node",
            str(args.nproc), "--python", str(args.python), "--ops", "all_reduce", "--sizes",
            args.sizes, "--iters", str(args.iters), "--warmup", str(args.warmup),
            "--format", "json"]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"neuron-env collectives failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    rows = json.loads(done.stdout)["rows"]
    return {row["size"]: row["time_s"] for row in rows}, wall


def bare(args: argparse.Namespace, sizes: list[int]) -> tuple[dict[int, float], float]:
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bare_all_reduce.py"
        script.write_text(BARE)
        argv = [str(args.python), "-m", "torch.distributed.run", "--nnodes", "1",
                "--nproc-per-node", str(args.nproc), "--master-addr", "127.0.0.1",
                "--master-port", str(free_port()), str(script),
                json.dumps([sizes, args.warmup, args.iters]), tmp]  # fmt: skip
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, text=True, check=True)
        wall = time.perf_counter() - start
        ranks = [json.loads(p.read_text()) for p in Path(tmp).glob("rank-*.json")]
    return {s: statistics.median(r[str(s)] for r in ranks) for s in sizes}, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", type=Path, default=default_python())
    parser.add_argument("--nproc", type=int, default=2)
    parser.add_argument("--sizes", default=SIZES)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    ours, theirs, walls = [], [], []
    for _ in range(args.runs):  # alternating, so both see the same load
        times, wall = harness(args)
        ours.append(times)
        theirs.append(bare(args, sorted(times))[0])
        walls.append(wall)
    sizes = sorted(ours[0])
    print(f"all_reduce on gloo, {args.nproc} processes, {args.iters} iterations after "
          f"{args.warmup} warm-up, median of {args.runs} run(s), "
          f"{os.cpu_count()} CPUs")  # fmt: skip
    print(f"{'size (B)':>10} {'bare (us)':>11} {'harness (us)':>13} {'ratio':>7}")
    for size in sizes:
        mine = statistics.median(run[size] for run in ours)
        base = statistics.median(run[size] for run in theirs)
        print(f"{size:>10} {base * 1e6:>11.1f} {mine * 1e6:>13.1f} {mine / base:>6.2f}x")
    print(f"harness wall time (torchrun, checks, all steps): {statistics.median(walls):.1f} s")


if __name__ == "__main__":
    main()
