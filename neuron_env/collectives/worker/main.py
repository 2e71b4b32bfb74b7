"""One rank of ``neuron-env collectives``: join the job, run every (op, size), check, report.

The request (argv[0], JSON) names the backend, the steps (op, size and element count each, as
neuron-env planned them), the dtype, the iterations and the per-op timeout. RANK, WORLD_SIZE,
LOCAL_RANK, MASTER_ADDR and MASTER_PORT are set by the launcher (torchrun), or by neuron-env from
srun's or mpirun's variables.

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
from .watchdog import EXIT_HUNG, PREFIX, Watchdog

EXIT_FATAL = 3
#: Settings that must be the same on every rank, compared before the backend starts.
SAME_ON_EVERY_RANK = ("NEURON_RT_ROOT_COMM_ID",)


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
        store = _rendezvous(request, rank, world)
        differ = same_everywhere(store, rank, world, float(request["timeout"]))
        device = None if differ else _join(request, rank, world, store)
    except Exception as exc:  # the backend is missing or the rendezvous failed: say so, end
        emit("fatal", rank=rank, message=f"{type(exc).__name__}: {exc}".strip())
        return EXIT_FATAL
    if differ:
        emit("env-mismatch", rank=rank, variable=differ[0], values=differ[1])
        return EXIT_FATAL
    watchdog = Watchdog(rank, world, float(request["timeout"]))
    watchdog.start()
    for index, step in enumerate(request["steps"]):
        watchdog.begin(index, step)
        try:
            record = _run_step(request, step, index, rank, world, device, watchdog)
        except Exception as exc:  # a peer left mid-collective (gloo: its connection closed)
            if "TORCHELASTIC_RUN_ID" in os.environ:
                raise  # torchrun names the rank that failed first, with its exit code or signal
            watchdog.failed(index, step, f"{type(exc).__name__}: {exc}")
            return EXIT_HUNG
        _report(watchdog.store, index, step, rank, world, record)
        watchdog.end()
    watchdog.stop()
    _all_done(store, rank, world, float(request["timeout"]))
    if rank == 0:
        emit("done", world=world)
    import torch.distributed as dist

    dist.destroy_process_group()
    return 0


def _all_done(store: Any, rank: int, world: int, timeout: float) -> None:
    """Rank 0 may host the store (under srun, mpirun): it waits until every rank is done with
    it, so none loses the store mid-call (a rank still checking a large buffer did: SIGABRT)."""
    store.set(f"{PREFIX}/done/{rank}", "1")
    if rank == 0:
        keys = [f"{PREFIX}/done/{r}" for r in range(world)]
        store.wait(keys, datetime.timedelta(seconds=timeout))


def _rendezvous(request: dict[str, Any], rank: int, world: int) -> Any:
    """The launcher's store (torchrun's agent), or rank 0's, exactly as ``env://`` finds it:
    reached before the backend starts, so the ranks can compare their settings first."""
    import torch.distributed as dist

    timeout = datetime.timedelta(seconds=float(request["timeout"]))
    store, _, _ = next(dist.rendezvous("env://", rank, world, timeout=timeout))
    return store


def same_everywhere(
    store: Any, rank: int, world: int, timeout: float
) -> tuple[str, dict[str, list[int]]] | None:
    """Each variable of :data:`SAME_ON_EVERY_RANK` as every rank has it: None when they agree,
    else the first that differs and its values, each with the ranks holding it ("" when unset).

    NEURON_RT_ROOT_COMM_ID that differs between ranks makes the runtime fail with
    ``Nrt::BuildGlobalComm failed`` once the backend starts; said here, the ranks are named.
    """
    for name in SAME_ON_EVERY_RANK:
        key = f"{PREFIX}/env/{name}"
        store.set(f"{key}/{rank}", os.environ.get(name, ""))
        keys = [f"{key}/{r}" for r in range(world)]
        store.wait(keys, datetime.timedelta(seconds=timeout))
        held: dict[str, list[int]] = {}
        for r, k in enumerate(keys):
            held.setdefault(store.get(k).decode(), []).append(r)
        if len(held) > 1:
            _all_read(store, key, rank, world, timeout)
            return name, held
    return None


def _all_read(store: Any, key: str, rank: int, world: int, timeout: float) -> None:
    """The ranks are about to end: the one that may host the store (rank 0) waits until every
    rank has read it, so none is cut off mid-read and reports that instead."""
    store.set(f"{key}/read/{rank}", "1")
    if rank == 0:
        store.wait([f"{key}/read/{r}" for r in range(world)], datetime.timedelta(seconds=timeout))
        time.sleep(0.5)  # the last answers on their way


def _join(request: dict[str, Any], rank: int, world: int, store: Any) -> Any:
    import torch
    import torch.distributed as dist

    backend = request["backend"]
    local = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        torch.cuda.set_device(local)
    # The Neuron runtime must not be initialised before init_process_group (TorchNeuron docs).
    dist.init_process_group(
        backend=backend,
        store=dist.PrefixStore("default_pg", store),  # as init_method="env://" wraps it
        rank=rank,
        world_size=world,
        # Longer than the watchdog's: a backend's own timeout would end the rank unnamed.
        timeout=datetime.timedelta(seconds=2 * float(request["timeout"]) + 30),
    )
    return torch.device({"gloo": "cpu", "nccl": f"cuda:{local}"}.get(backend, backend))


def _run_step(
    request: dict[str, Any],
    step: dict[str, Any],
    index: int,
    rank: int,
    world: int,
    device: Any,
    watchdog: Watchdog,
) -> dict[str, Any]:
    from .ops import DTYPES, OPS, buffers, check, fingerprint, pattern

    op, dtype = OPS[step["op"]], DTYPES[request["dtype"]]
    how = pattern(op.name, request["dtype"], world, index)
    source, out = (t.to(dtype).to(device) for t in buffers(op, rank, world, step["count"], how))
    watchdog.store.set(f"{PREFIX}/reached/{index}/{rank}", "1")
    times = _timed(op, source, out, int(request["warmup"]), int(request["iters"]), device)
    watchdog.store.set(f"{PREFIX}/finished/{index}/{rank}", "1")
    return {
        "rank": rank,
        "host": os.uname().nodename,
        "time_s": statistics.median(times),
        "wrong": check(op.name, request["dtype"], rank, world, step["count"], index, out),
        "fingerprint": fingerprint(out) if op.same_everywhere else None,
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
