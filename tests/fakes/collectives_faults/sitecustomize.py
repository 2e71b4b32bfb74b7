"""Fault injection for the collectives stand-in (gloo on CPU): put this folder on PYTHONPATH.

Python imports ``sitecustomize`` at start-up, so every rank torchrun starts loads it. With
COLLECTIVES_PIDS set, every rank writes ``RANK PID PGID`` to a file in that folder (the tests
check that none is left running). Only the rank named by COLLECTIVES_FAULT_RANK changes anything
(torchrun's own agent has no RANK):

* ``wrong``: its all-reduce output has element 5 off by one;
* ``corrupt``: COLLECTIVES_CORRUPT maps ops to corruptions of its output after each call
  (``all_reduce:nan,all_gather:swap,...``): nan, inf, zeros, flip (one bit of one element), swap
  (rank 0's and rank 1's chunks trade places), stale (the previous size's output left in it);
* ``hang``: it never reaches the collective whose buffer has COLLECTIVES_FAULT_COUNT elements
  (it blocks while building that buffer, as a rank stuck in its own work does);
* ``crash``: it is killed by SIGKILL while building that buffer (a segfault, the OOM killer);
* ``stop``: it stops itself (SIGSTOP) inside the collective on that buffer (a frozen process);
* ``slow``: every collective takes it 20 ms longer to finish;
* ``comm-id``: its NEURON_RT_ROOT_COMM_ID is COLLECTIVES_FAULT_VALUE (unset when empty).
"""

import os

KIND = os.environ.get("COLLECTIVES_FAULT")
RANK = os.environ.get("RANK")

if RANK is not None and os.environ.get("COLLECTIVES_PIDS"):
    with open(os.path.join(os.environ["COLLECTIVES_PIDS"], f"rank-{RANK}-{os.getpid()}"), "w") as f:
        f.write(f"{RANK} {os.getpid()} {os.getpgid(0)}\n")

if KIND and os.environ.get("COLLECTIVES_FAULT_RANK") == RANK:
    import signal
    import threading
    import time

    import torch
    import torch.distributed as dist

    COUNT = int(os.environ.get("COLLECTIVES_FAULT_COUNT", "0"))
    CALLS = ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
             "all_to_all_single", "broadcast")  # fmt: skip
    NAMES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")
    OPS = dict(zip(CALLS, NAMES, strict=True))

    def _wrap(name, after):
        call = getattr(dist, name)

        def wrapped(*args, **kwargs):
            work = call(*args, **kwargs)
            after(name, args[0])
            return work

        setattr(dist, name, wrapped)

    if KIND == "wrong":

        def _off_by_one(_name, out):
            if out.numel() > 5:
                out.view(-1)[5] += 1

        _wrap("all_reduce", _off_by_one)

    elif KIND == "corrupt":
        PLAN = dict(p.split(":") for p in os.environ["COLLECTIVES_CORRUPT"].split(","))
        _previous = {}

        def _corrupt(name, out):
            flat, how = out.view(-1), PLAN.get(OPS[name])
            n = flat.numel()
            sizes = _previous.setdefault(name, {})
            stale = next((t for size, t in reversed(sizes.items()) if size != n), None)
            sizes[n] = flat.clone()  # the right output of this size, before it is corrupted
            if how == "nan":
                flat[n // 2] = float("nan")
            elif how == "inf":
                flat[n - 1] = float("inf")
            elif how == "zeros":
                flat.zero_()
            elif how == "flip":
                bits = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
                flat.view(bits[flat.element_size()])[n // 3] ^= 1
            elif how == "swap" and n >= 2:
                half = n // 2
                flat.copy_(torch.cat([flat[half : 2 * half], flat[:half], flat[2 * half :]]))
            elif how == "stale" and stale is not None:
                keep = min(n, stale.numel())
                flat[:keep] = stale[:keep]

        for _name in CALLS:
            _wrap(_name, _corrupt)

    elif KIND in ("hang", "crash"):
        _arange = torch.arange

        def _faulty_arange(*args, **kwargs):
            if len(args) == 2 and args[1] - args[0] == COUNT:
                if KIND == "crash":
                    os.kill(os.getpid(), signal.SIGKILL)
                threading.Event().wait()  # forever: the watchdog must end the job
            return _arange(*args, **kwargs)

        torch.arange = _faulty_arange

    elif KIND == "stop":
        _calls = {}

        def _stopping(name):
            call = getattr(dist, name)

            def stopping(*args, **kwargs):
                if args[0].numel() == COUNT:
                    os.kill(os.getpid(), signal.SIGSTOP)  # inside the collective: peers wait
                return call(*args, **kwargs)

            setattr(dist, name, stopping)

        for _name in CALLS:
            _stopping(_name)

    elif KIND == "slow":

        def _slowed(call):
            def slow(*args, **kwargs):
                work = call(*args, **kwargs)
                time.sleep(0.02)  # the injected slowness itself, not a wait in a test
                return work

            return slow

        for _name in CALLS:
            setattr(dist, _name, _slowed(getattr(dist, _name)))

    elif KIND == "comm-id":
        VALUE = os.environ.get("COLLECTIVES_FAULT_VALUE", "")
        if VALUE:
            os.environ["NEURON_RT_ROOT_COMM_ID"] = VALUE
        else:
            os.environ.pop("NEURON_RT_ROOT_COMM_ID", None)
