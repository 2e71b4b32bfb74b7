"""Run every probe concurrently, each with its own timeout, and assemble :class:`HostFacts`.

A probe that raises or runs past its timeout becomes a :class:`ProbeError` and its section stays
``None``; collection itself never fails and never waits longer than the slowest timeout.
"""

from __future__ import annotations

import datetime
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from neuron_env.facts import NOT_PYTHON_FIX, HostFacts, ProbeError
from neuron_env.frozen import frozen
from neuron_env.probe.driver import probe_driver
from neuron_env.probe.environment import probe_environment
from neuron_env.probe.imds import probe_ec2
from neuron_env.probe.os_release import probe_os
from neuron_env.probe.python_env import NotPython, probe_python
from neuron_env.probe.sysroot import Refused, Sysroot
from neuron_env.probe.system import probe_system
from neuron_env.signals import InBackground

DEFAULT_TIMEOUTS = {"os": 3.0, "ec2": 1.0, "driver": 8.0, "system": 3.0, "python": 15.0, "env": 3.0}


@frozen
class ProbeOptions:
    """Where to look and how long each probe may take (seconds)."""

    sysroot: Path = Path("/")
    python: Path | None = None
    environ: Mapping[str, str] | None = None
    timeouts: Mapping[str, float] = field(default_factory=lambda: dict(DEFAULT_TIMEOUTS))

    @classmethod
    def capped(cls, limit: float | None, **kwargs: Any) -> ProbeOptions:
        """Options whose probes take at most ``limit`` seconds each (IMDS keeps its 1 s)."""
        timeouts = {k: v if limit is None else min(v, limit) for k, v in DEFAULT_TIMEOUTS.items()}
        return cls(timeouts=timeouts, **kwargs)


def collect_facts(options: ProbeOptions) -> HostFacts:
    """Probe the host behind ``options.sysroot`` and the target interpreter ``options.python``."""
    started = time.monotonic()
    probes = _probes(options)
    # The target interpreter's probe starts first (its subprocess runs while the others work);
    # results and errors keep the probes' order.
    started_first = {name: _start(name, probes[name]) for name in ("python",) if name in probes}
    futures = {name: started_first.get(name) or _start(name, fn) for name, fn in probes.items()}
    results: dict[str, Any] = {}
    errors: list[ProbeError] = []
    for name, future in futures.items():
        timeout = options.timeouts.get(name, 5.0)
        try:
            results[name] = _result(future, started + timeout)
        except TimeoutError:  # the wait's, or the probe's own (concurrent.futures' rule)
            errors.append(ProbeError(name, "timeout", f"no answer within {timeout:g} s"))
        except Exception as exc:
            errors.append(ProbeError(name, "error", _message(exc), _fix(exc)))
    try:
        host_name = hostname(options.sysroot)
    except Refused as exc:  # reported like a probe's failure: the rest of the host is still known
        host_name = None
        errors.append(ProbeError("hostname", "error", exc.message, exc.hint or ""))
    return HostFacts(
        collected_at=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        sysroot=str(options.sysroot),
        hostname=host_name,
        duration_s=round(time.monotonic() - started, 3),
        probe_errors=tuple(errors),
        **results,
    )


def _probes(options: ProbeOptions) -> dict[str, Callable[[], Any]]:
    root = options.sysroot
    timeouts = options.timeouts
    probes: dict[str, Callable[[], Any]] = {
        "os": lambda: probe_os(root, options.environ),
        "ec2": lambda: probe_ec2(timeout=_inner(timeouts, "ec2"), environ=options.environ),
        "driver": lambda: probe_driver(root, neuron_ls_timeout=_inner(timeouts, "driver")),
        "system": lambda: probe_system(root),
        "env": lambda: probe_environment(root, options.environ),
    }
    if options.python is not None:
        python = options.python
        probes["python"] = lambda: probe_python(python, timeout=_inner(timeouts, "python"))
    return probes


def _start(name: str, probe: Callable[[], Any]) -> InBackground[Any]:
    """Run ``probe`` in a daemon thread: one that hangs can never keep the process alive."""
    return InBackground(probe, name=f"probe-{name}", daemon=True).start()


def _inner(timeouts: Mapping[str, float], name: str) -> float:
    """A subprocess inside a probe stops a little before the probe's own deadline."""
    return max(0.2, timeouts.get(name, DEFAULT_TIMEOUTS[name]) * 0.9 - 0.1)


def _result(future: InBackground[Any], deadline: float) -> Any:
    return future.result(timeout=max(0.0, deadline - time.monotonic()))


def _message(exc: BaseException) -> str:
    return getattr(exc, "message", None) or str(exc) or type(exc).__name__


def _fix(exc: BaseException) -> str:
    """What a refusal of the sysroot (a link leading off it, a FIFO) says to do, or a --python
    that is no Python."""
    if isinstance(exc, NotPython):
        return NOT_PYTHON_FIX
    return (exc.hint or "") if isinstance(exc, Refused) else ""


def hostname(sysroot: Path) -> str | None:
    """The host's name; :class:`Refused` when a file holding it leads off the sysroot."""
    root = Sysroot.at(sysroot)
    for candidate in ("proc/sys/kernel/hostname", "etc/hostname"):
        if name := root.file_text(candidate):
            return name
    return socket.gethostname() if sysroot == Path("/") else None
