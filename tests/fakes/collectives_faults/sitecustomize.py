"""Fault injection for the collectives stand-in (gloo on CPU): put this folder on PYTHONPATH.

Python imports ``sitecustomize`` at start-up, so every rank torchrun starts loads it; only the
rank named by COLLECTIVES_FAULT_RANK changes anything (torchrun's own agent has no RANK):

* ``wrong``: its all-reduce output has element 5 off by one;
* ``hang``: it never reaches the collective whose buffer has COLLECTIVES_FAULT_COUNT elements
  (it blocks while building that buffer, as a rank stuck in its own work does);
* ``slow``: every collective takes it 20 ms longer to finish.
"""

import os

KIND = os.environ.get("COLLECTIVES_FAULT")

if KIND and os.environ.get("RANK") == os.environ.get("COLLECTIVES_FAULT_RANK"):
    import threading
    import time

    import torch
    import torch.distributed as dist

    if KIND == "wrong":
        _all_reduce = dist.all_reduce

        def _wrong_all_reduce(tensor, *args, **kwargs):
            work = _all_reduce(tensor, *args, **kwargs)
            if tensor.numel() > 5:
                tensor.view(-1)[5] += 1
            return work

        dist.all_reduce = _wrong_all_reduce

    elif KIND == "hang":
        _arange = torch.arange
        _count = int(os.environ["COLLECTIVES_FAULT_COUNT"])

        def _hanging_arange(*args, **kwargs):
            if len(args) == 2 and args[1] - args[0] == _count:
                threading.Event().wait()  # forever: the watchdog must end the job
            return _arange(*args, **kwargs)

        torch.arange = _hanging_arange

    elif KIND == "slow":

        def _slowed(call):
            def slow(*args, **kwargs):
                work = call(*args, **kwargs)
                time.sleep(0.02)  # the injected slowness itself, not a wait in a test
                return work

            return slow

        for _name in ("all_reduce", "all_gather_into_tensor", "reduce_scatter_tensor",
                      "all_to_all_single", "broadcast"):  # fmt: skip
            setattr(dist, _name, _slowed(getattr(dist, _name)))
