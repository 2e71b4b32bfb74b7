"""The per-op timeout: a thread on every rank that ends the rank when a step outlives it.

Each rank marks in the rendezvous store when it reaches a step (its inputs ready, about to call
the collective) and when it finishes it, and its watchdog counts a heartbeat there every
:data:`BEAT_S`. When a step runs past the timeout, the watchdog reads those marks and reports the
ranks whose heartbeat stopped (a stopped or frozen process: SIGSTOP, a hung device call holding
the interpreter), the ranks that never reached the step (the usual culprit: the others wait for
it inside the collective) and those that did not finish it, and ends the process, so the launcher
ends the job. The thread has its own store connection: the main thread may be blocked.
"""

from __future__ import annotations

import contextlib
import datetime
import os
import threading
import time
from typing import Any

import torch.distributed as dist

from .channel import emit

PREFIX = "neuron-env/collectives"
EXIT_HUNG = 4
BEAT_S = 0.2
#: A rank whose heartbeat did not move over this long is not running.
SILENT_S = 1.0


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
        self._stopped = threading.Event()

    def begin(self, index: int, step: dict[str, Any]) -> None:
        with self._lock:
            self._step, self._since = (index, step), time.monotonic()

    def end(self) -> None:
        with self._lock:
            self._step = None

    def stop(self) -> None:
        """End the thread (the sweep is over) before the process ends: no store call then."""
        self._stopped.set()
        self.join(timeout=5)

    def run(self) -> None:
        while not self._stopped.wait(BEAT_S):
            # The store's host may be gone: the timeout below still ends the rank.
            with contextlib.suppress(Exception):
                self.store.add(f"{PREFIX}/beat/{self.rank}", 1)
            with self._lock:
                late = self._step is not None and time.monotonic() - self._since > self.timeout
                step = self._step
            if late and step is not None:
                self._report(*step)
                os._exit(EXIT_HUNG)

    def failed(self, index: int, step: dict[str, Any], error: str) -> None:
        """The step's collective raised at once (gloo: a peer's connection closed): report
        which ranks are gone, as for a hang, with the error."""
        self._report(index, step, error=error[:300])

    def _report(self, index: int, step: dict[str, Any], **more: Any) -> None:
        try:
            missing = self._ranks_without(f"reached/{index}")
            unfinished = self._ranks_without(f"finished/{index}")
            stopped = self._silent_ranks()
        except Exception as exc:  # the store's host (rank 0's launcher) is gone
            emit("hang", rank=self.rank, timeout=self.timeout, **step, store_error=str(exc),
                 **more)  # fmt: skip
            return
        emit("hang", rank=self.rank, timeout=self.timeout, **step, missing=missing,
             unfinished=unfinished, stopped=stopped, **more)  # fmt: skip

    def _silent_ranks(self) -> list[int]:
        """The ranks whose heartbeat did not move over :data:`SILENT_S` (this one's did)."""
        keys = [f"{PREFIX}/beat/{r}" for r in range(self.world)]
        before = [self.store.add(key, 0) for key in keys]
        for _ in range(round(SILENT_S / BEAT_S)):  # beating on: the others are measuring too
            time.sleep(BEAT_S)
            self.store.add(keys[self.rank], 1)
        return [r for r, key in enumerate(keys) if self.store.add(key, 0) == before[r]]

    def _ranks_without(self, mark: str) -> list[int]:
        return [r for r in range(self.world) if not self.store.check([f"{PREFIX}/{mark}/{r}"])]
