"""Which indexes to read for a release, reading them (concurrently), and the result as data."""

from __future__ import annotations

import dataclasses
import datetime
import threading
from collections.abc import Callable

from neuron_env.errors import Interrupted
from neuron_env.frozen import frozen
from neuron_env.matrix import Matrix, Release
from neuron_env.matrix.commands.indexcheck.compare import verify_release
from neuron_env.matrix.commands.indexcheck.facts import DEFAULT_INDEX, Fact
from neuron_env.matrix.commands.indexcheck.simple import (
    DEFAULT_TIMEOUT,
    IndexAccess,
    IndexReadout,
    command_deadline,
    index_access,
    read_index,
    tls_context,
)
from neuron_env.signals import join_thread

#: ``--neuron-index`` replaces the index that serves torch-neuronx, ``--pytorch-index`` the one
#: that serves torch (the same rule as ``neuron-env install``).
OVERRIDE_FOR = {"neuron": "torch-neuronx", "pytorch": "torch"}


@frozen
class IndexToRead:
    """One index of the release, where it is read from, and the projects asked of it."""

    name: str
    access: IndexAccess
    origin: str
    projects: tuple[str, ...]


@frozen
class IndexResult:
    """How reading one index went (URLs redacted)."""

    name: str
    url: str
    origin: str
    readable: bool
    projects: tuple[str, ...]
    formats: tuple[str, ...]
    failed_url: str | None
    reason: str | None
    seconds: float


@frozen
class Verification:
    """Everything ``matrix verify`` found about one release."""

    release: str
    checked_on: datetime.date
    indexes: tuple[IndexResult, ...]
    facts: tuple[Fact, ...]

    @property
    def counts(self) -> dict[str, int]:
        counts = {"confirmed": 0, "contradicted": 0, "unknown": 0}
        for fact in self.facts:
            counts[fact.status] += 1
        return counts

    @property
    def unreadable(self) -> list[IndexResult]:
        return [ix for ix in self.indexes if not ix.readable]

    @property
    def exit_code(self) -> int:
        return 1 if self.counts["contradicted"] or self.unreadable else 0


def indexes_to_read(
    release: Release,
    overrides: dict[str, str | None],
    default_index: tuple[str, str] | None = None,
) -> list[IndexToRead]:
    """The release's indexes (mirrors from ``overrides`` put in), each with its projects.

    ``default_index`` (URL, where it was configured) adds the default index, read for the
    placeholders' names. Raises ValueError for a URL that is not http(s).
    """
    replaced: dict[str, tuple[str, str]] = {}
    for flag, package in OVERRIDE_FOR.items():
        url, owner = overrides.get(flag), release.index_for(package)
        if url and owner:
            replaced[owner] = (url, f"--{flag}-index")
    wanted = ["torch", "torch-neuronx", *release.packages]
    plan = []
    for name, index in release.indexes.items():
        projects = tuple(p for p in wanted if release.index_for(p) == name)
        projects += tuple(c for c, entry in release.companions.items() if entry.index == name)
        if not projects:
            continue
        url, origin = replaced.get(name, (index.url, "matrix"))
        plan.append(IndexToRead(name, index_access(url), origin, projects))
    if default_index is not None and release.placeholders:
        url, origin = default_index
        names = tuple(release.placeholders)
        plan.append(IndexToRead(DEFAULT_INDEX, index_access(url), origin, names))
    return plan


def verify(
    release: Release,
    matrix: Matrix,
    plan: list[IndexToRead],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Callable[[IndexResult], None] | None = None,
    today: datetime.date | None = None,
) -> Verification:
    """Read every index of ``plan`` at once (one thread each) and compare the release."""
    context = tls_context()
    deadline = command_deadline(timeout)

    def read(item: IndexToRead) -> IndexReadout:
        readout = read_index(
            item.name,
            item.access,
            list(item.projects),
            timeout=timeout,
            deadline=deadline,
            context=context,
        )
        if (
            item.name != DEFAULT_INDEX
            and readout.pages
            and not any(page.found for page in readout.pages.values())
        ):
            # None of the packages routed to it: most likely not the index's simple URL at all.
            why = f"HTTP 404 for {', '.join(readout.pages)}: is this the index's simple URL?"
            readout = dataclasses.replace(readout, failed_url=readout.url, reason=why)
        if progress is not None:
            progress(_result(item, readout))
        return readout

    readouts = _read_all(read, plan)
    facts = verify_release(release, matrix, {r.name: r for r in readouts})
    results = tuple(_result(item, r) for item, r in zip(plan, readouts, strict=True))
    day = today or datetime.datetime.now(datetime.timezone.utc).date()
    return Verification(str(release.version), day, results, tuple(facts))


def _read_all(
    read: Callable[[IndexToRead], IndexReadout], plan: list[IndexToRead]
) -> list[IndexReadout]:
    """Every index read at once, each in a daemon thread: Ctrl-C ends the run at once instead of
    waiting out a hung index's timeout (nothing has been written by then)."""
    found: dict[int, IndexReadout] = {}
    failed: list[BaseException] = []

    def work(number: int, item: IndexToRead) -> None:
        try:
            found[number] = read(item)
        except BaseException as exc:  # re-raised in the caller's thread below
            failed.append(exc)

    threads = [
        threading.Thread(target=work, args=(n, item), daemon=True) for n, item in enumerate(plan)
    ]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            join_thread(thread)
    except KeyboardInterrupt:
        raise Interrupted("Interrupted. Nothing was written.") from None
    if failed:
        raise failed[0]
    return [found[n] for n in range(len(plan))]


def _result(item: IndexToRead, readout: IndexReadout) -> IndexResult:
    formats = tuple(sorted({p.format for p in readout.pages.values() if p.found}))
    return IndexResult(
        item.name,
        item.access.shown,
        item.origin,
        readout.readable,
        item.projects,
        formats,
        readout.failed_url,
        readout.reason,
        round(readout.seconds, 3),
    )
