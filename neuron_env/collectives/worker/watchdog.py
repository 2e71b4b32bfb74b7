"""The per-op timeout: a thread on every rank that ends the rank when a step outlives it.

Each rank marks in the rendezvous store when it reaches a step (its inputs ready, about to call
the collective) and when it finishes it. When a step runs past the timeout, the watchdog reads
those marks, reports the ranks that never reached the step (the usual culprit: the others wait
for it inside the collective) and those that did not finish it, and ends the process, so the
launcher ends the job. The thread has its own store connection: the main thread may be blocked.
"""

from __future__ import annotations

import datetime
import os
import threading
import time
from typing import Any

import torch.distributed as dist

from .channel import emit

PREFIX = "neuron-env/collectives"
EXIT_HUNG = 4


def connect(timeout: float) -> Any:
    """A client of the launcher's rendezvous store (MASTER_ADDR:MASTER_PORT)."""
    return dist.TCPStore(
        os.environ["MASTER_ADDR"],
        int(os.environ["MASTER_PORT"]),
        is_master=False,
        timeout=datetime.timedelta(seconds=timeout),
        wait_for_workers=False,
    )


class Watchdog(threading.Thread):
    def __init__(self, rank: int, world: int, timeout: float) -> None:
        super().__init__(daemon=True, name="collectives-watchdog")
        self.rank, self.world, self.timeout = rank, world, timeout
        self.store = connect(timeout)
        self._step: tuple[int, dict[str, Any]] | None = None
        self._since = 0.0
        self._lock = threading.Lock()

    def begin(self, index: int, step: dict[str, Any]) -> None:
        with self._lock:
            self._step, self._since = (index, step), time.monotonic()

    def end(self) -> None:
        with self._lock:
            self._step = None

    def run(self) -> None:
        while True:
            time.sleep(0.2)
            with self._lock:
                late = self._step is not None and time.monotonic() - self._since > self.timeout
                step = self._step
            if late and step is not None:
                self._report(*step)
                os._exit(EXIT_HUNG)

    def _report(self, index: int, step: dict[str, Any]) -> None:
        try:
            missing = self._ranks_without(f"reached/{index}")
            unfinished = self._ranks_without(f"finished/{index}")
        except Exception as exc:  # the store's host (rank 0's launcher) is gone
            emit("hang", rank=self.rank, timeout=self.timeout, **step, store_error=str(exc))
            return
        emit("hang", rank=self.rank, timeout=self.timeout, **step, missing=missing,
             unfinished=unfinished)  # fmt: skip

    def _ranks_without(self, mark: str) -> list[int]:
        return [r for r in range(self.world) if not self.store.check([f"{PREFIX}/{mark}/{r}"])]
