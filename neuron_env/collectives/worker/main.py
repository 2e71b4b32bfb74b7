"""One rank of ``neuron-env collectives``: join the job, run every (op, size), check, report.

The request (argv[0], JSON) names the backend, the ops, the sizes, the dtype, the iterations and
the per-op timeout. RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and MASTER_PORT are set by the
launcher (torchrun), or by neuron-env from srun's or mpirun's variables.

Each timed iteration starts after an untimed barrier, so a rank's time is its own time to finish
the op, not its wait for a late peer: a slow rank shows as itself. Every rank checks its last
output against the CPU golden; rank 0 gathers the ranks' records through the rendezvous store and
reports one ``step`` line per (op, size).
"""

from __future__ import annotations

import datetime
import json
import os
import statistics
import time
from typing import Any

from .channel import emit, open_channel
from .watchdog import PREFIX, Watchdog

EXIT_FATAL = 3


def _die_with_parent() -> None:
    """End this rank when the process that started it ends (Linux ``PR_SET_PDEATHSIG``).

    torchrun starts each rank in a session of its own, so when neuron-env is interrupted and
    kills torchrun's process group, the ranks are not in it: they ran on, holding the devices,
    after neuron-env had said that what it started was stopped.
    """
    import ctypes
    import signal

    parent = os.getppid()
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # 1: PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the watchdog still ends the rank
        return
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(EXIT_FATAL)


def main(argv: list[str]) -> int:
    _die_with_parent()
    open_channel()
    request = json.loads(argv[0])
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    try:
        device = _join(request, rank)
    except Exception as exc:  # the backend is missing or the rendezvous failed: say so, end
        emit("fatal", rank=rank, message=f"{type(exc).__name__}: {exc}".strip())
        return EXIT_FATAL
    watchdog = Watchdog(rank, world, float(request["timeout"]))
    watchdog.start()
    for index, step in enumerate(_steps(request, world)):
        watchdog.begin(index, step)
        record = _run_step(request, step, index, rank, world, device, watchdog)
        _report(watchdog.store, index, step, rank, world, record)
        watchdog.end()
    if rank == 0:
        emit("done", world=world)
    import torch.distributed as dist

    dist.destroy_process_group()
    return 0


def _join(request: dict[str, Any], rank: int) -> Any:
    import torch
    import torch.distributed as dist

    backend = request["backend"]
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        torch.cuda.set_device(local)
    # The Neuron runtime must not be initialised before init_process_group (TorchNeuron docs).
    dist.init_process_group(
        backend=backend,
        init_method="env://",
        timeout=datetime.timedelta(seconds=float(request["timeout"])),
    )
    return torch.device({"gloo": "cpu", "nccl": f"cuda:{local}"}.get(backend, backend))


def _steps(request: dict[str, Any], world: int) -> list[dict[str, Any]]:
    from .ops import DTYPES, OPS

    width = DTYPES[request["dtype"]].itemsize
    steps = []
    for name in request["ops"]:
        unit = width * (world if OPS[name].split else 1)
        for size in request["sizes"]:
            count = (int(size) // unit) * (unit // width)
            steps.append({"op": name, "size": count * width, "count": count})
    return steps


def _run_step(
    request: dict[str, Any],
    step: dict[str, Any],
    index: int,
    rank: int,
    world: int,
    device: Any,
    watchdog: Watchdog,
) -> dict[str, Any]:
    from .ops import DTYPES, OPS, buffers, fingerprint, first_wrong, tolerance

    op, dtype = OPS[step["op"]], DTYPES[request["dtype"]]
    if step["count"] == 0:
        watchdog.store.set(f"{PREFIX}/reached/{index}/{rank}", "1")
        return {"rank": rank, "skipped": True}
    source, out = (t.to(dtype).to(device) for t in buffers(op, rank, world, step["count"]))
    watchdog.store.set(f"{PREFIX}/reached/{index}/{rank}", "1")
    times = _timed(op, source, out, int(request["warmup"]), int(request["iters"]), device)
    got = out
    golden = op.golden(rank, world, step["count"])
    watchdog.store.set(f"{PREFIX}/finished/{index}/{rank}", "1")
    return {
        "rank": rank,
        "host": os.uname().nodename,
        "time_s": statistics.median(times),
        "wrong": first_wrong(got, golden, tolerance(dtype, world)),
        "fingerprint": fingerprint(got) if op.same_everywhere else None,
    }


def _timed(op: Any, source: Any, out: Any, warmup: int, iters: int, device: Any) -> list[float]:
    import torch.distributed as dist

    times = []
    for i in range(warmup + iters):
        if op.in_place:
            out.copy_(source)
        _synchronize(device)
        dist.barrier()
        start = time.perf_counter()
        op.call(out, source)
        _synchronize(device)
        if i >= warmup:
            times.append(time.perf_counter() - start)
    return times


def _synchronize(device: Any) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)
    elif device.type != "cpu":
        module = getattr(torch, device.type, None)
        sync = getattr(module, "synchronize", None)
        if sync is not None:
            sync()


def _report(
    store: Any, index: int, step: dict[str, Any], rank: int, world: int, record: dict[str, Any]
) -> None:
    """Every rank leaves its record in the store; rank 0 reads them all and reports the step."""
    store.set(f"{PREFIX}/record/{index}/{rank}", json.dumps(record))
    if rank == 0:
        keys = [f"{PREFIX}/record/{index}/{r}" for r in range(world)]
        ranks = [json.loads(store.get(key)) for key in keys]
        emit("step", **step, ranks=ranks)
