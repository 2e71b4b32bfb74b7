"""The device levels' progress on stderr, handed as a factory to the commands that run them.

``smoke``, ``selftest``, and ``doctor``/``preflight`` with ``--level 1/2`` pass
:func:`device_progress` to their workflow; the views (rich) load only when a run starts, so a
command's ``--help`` does not import them.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from neuron_env.selftest.harness import ProgressCallback


def device_progress() -> AbstractContextManager[ProgressCallback]:
    """The device levels' progress on stderr, for the commands that run them."""
    from neuron_env.selftest.output import progress

    return progress()
