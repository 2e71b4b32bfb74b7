"""Progress: how a workflow shows what it does without knowing the terminal.

A command hands its workflow a *progress factory*: called when the work starts, it opens the view
(a context manager, on stderr) and yields the *progress callback* the work calls with each event.
The workflow enters it only while its work runs, so a run that fails its checks first shows
nothing. The callback's event type is the family's own (``selftest.harness.ProgressCallback``,
``evaluate.harness.ProgressCallback``, ``collectives.workflow.ProgressCallback``).
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TypeVar

Callback = TypeVar("Callback")

ProgressFactory = Callable[[], AbstractContextManager[Callback]]
"""Opens the progress view and yields its callback: ``ProgressFactory[ProgressCallback | None]``."""
