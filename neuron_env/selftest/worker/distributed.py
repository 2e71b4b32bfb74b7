"""The all-reduce case: 2 local processes, torchrun-style environment, exact sum expected.

The worker starts one process per rank (``python -I <neuron_env>/worker/target selftest --rank
REQUEST``) and gives each the variables torchrun would (RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR,
MASTER_PORT). Each rank reports one JSON line; a rank that does not finish in time is killed.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from ...worker.target.compare import compare
from ...worker.target.device import DISTRIBUTED_BACKENDS, Device
from ...worker.target.protocol import emit
from ...worker.target.timing import first_and_steady
from .cases import Case

# The one entry of every worker (neuron_env/worker/target), run with this worker's name.
ENTRY = str(Path(__file__).resolve().parents[2] / "worker" / "target")


def run_allreduce(
    device: Device, case: Case, dtype_name: str, mode: str, timeout: float
) -> dict[str, Any]:
    world = int(case.params["world_size"])
    if device.type != "cpu" and device.count < world:
        return {
            "status": "skipped",
            "message": f"needs {world} {device.type} devices; {device.count} visible",
        }
    request = {"device": device.type, "params": case.params, "timeout": timeout}
    reports = _run_ranks(world, request, timeout)
    return _combine(reports, world)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _run_ranks(world: int, request: dict[str, Any], timeout: float) -> list[dict[str, Any]]:
    port = str(_free_port())
    procs = []
    for rank in range(world):
        env = dict(
            os.environ,
            RANK=str(rank),
            LOCAL_RANK=str(rank),
            WORLD_SIZE=str(world),
            LOCAL_WORLD_SIZE=str(world),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=port,
        )
        argv = [sys.executable, "-I", ENTRY, "selftest", "--rank", json.dumps(request)]
        procs.append(
            subprocess.Popen(
                argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=env,
                # The worker's own process group: when neuron-env kills the worker's group (a
                # timeout, Ctrl-C), the ranks go with it.
            )
        )
    deadline = time.monotonic() + timeout
    return [_collect(rank, proc, deadline) for rank, proc in enumerate(procs)]


def _collect(rank: int, proc: Any, deadline: float) -> dict[str, Any]:
    try:
        out, err = proc.communicate(timeout=max(deadline - time.monotonic(), 0.1))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        return {"rank": rank, "ok": False, "problem": "did not finish in time and was killed"}
    sys.stderr.write(err)
    for line in reversed(out.splitlines()):
        if line.startswith("{"):
            return dict(json.loads(line), rank=rank)
    tail = err.strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
    return {"rank": rank, "ok": False, "problem": tail[0]}


def _combine(reports: list[dict[str, Any]], world: int) -> dict[str, Any]:
    problems = [f"rank {r['rank']}: {r['problem']}" for r in reports if r.get("problem")]
    if problems:
        return {"status": "error", "message": "; ".join(problems)}
    comparisons = [dict(r["comparison"], tensor=f"rank {r['rank']}") for r in reports]
    slowest = max(reports, key=lambda r: r["steady_s"])
    return {
        "status": "pass" if all(c["ok"] for c in comparisons) else "fail",
        "comparisons": comparisons,
        "fallback_ops": slowest.get("fallback_ops"),
        "first_call_s": max(r["first_call_s"] for r in reports),
        "steady_s": slowest["steady_s"],
        "repeats": slowest["repeats"],
        "metrics": {
            "world_size": world,
            "backend": reports[0]["backend"],
            "bytes": reports[0]["bytes"],
        },
    }


def rank_main(argv: list[str]) -> int:
    """One rank: init the process group, all-reduce, compare with the exact sum, report."""
    request = json.loads(argv[0])
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    backend = DISTRIBUTED_BACKENDS[request["device"]]
    if request["device"] == "cuda":
        torch.cuda.set_device(rank)  # NCCL needs each rank on its own GPU before init
    # The Neuron runtime must not be initialised before init_process_group (TorchNeuron docs).
    dist.init_process_group(
        backend=backend,
        init_method="env://",
        rank=rank,
        world_size=world,
        timeout=datetime.timedelta(seconds=float(request["timeout"])),
    )
    kind = request["device"]
    device = Device(f"cuda:{rank}" if kind == "cuda" else kind)
    emit("rank", backend=backend, **_all_reduce(device, rank, world, request["params"]))
    dist.destroy_process_group()
    return 0


def _all_reduce(device: Device, rank: int, world: int, params: dict[str, Any]) -> dict[str, Any]:
    """Rank r contributes ``base * (r + 1) + r``: integers, so the float32 sum must be exact."""
    base = (torch.arange(int(params["numel"])) % 1024).float()
    mine = (base * (rank + 1) + rank).to(device.torch_device)
    work = mine.clone()
    expected = sum(base.double() * (r + 1) + r for r in range(world))

    def once() -> Any:
        work.copy_(mine)
        dist.all_reduce(work)
        return work

    device.clear_tracking()
    timings, result = first_and_steady(once, device.synchronize, int(params["repeats"]))
    return {
        "comparison": compare("output", result, expected, 0.0, 0.0),
        "bytes": mine.numel() * mine.element_size(),
        "fallback_ops": device.fallback_ops(),
        **timings,
    }
