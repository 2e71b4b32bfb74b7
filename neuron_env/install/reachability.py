"""Is an index reachable at all? Asked after a backend failed, to name the index that is down.

pip, unlike uv, may report an unreachable index only as "no matching distribution". A short GET
of the index URL tells the two apart. Only clear network failures (refused, unknown host, timed
out) count; anything else (an HTTP error, a certificate the backend may trust but urllib does
not) is inconclusive and reported as None.
"""

from __future__ import annotations

import socket
import urllib.error
from collections.abc import Sequence
from pathlib import Path

from neuron_env.errors import CommandFailed
from neuron_env.input_http import Deadline, fetch
from neuron_env.install.diagnose import Cause, cause_hint, dns_cause, explain
from neuron_env.install.outcome import InstallFailed
from neuron_env.install.plan import InstallPlan
from neuron_env.install.user_packages import user_conflict
from neuron_env.wording import size_label

TIMEOUT = 5.0
#: All the diagnosis's requests together end by then: it explains a failure, it must not outlast it.
DIAGNOSIS_SECONDS = 20.0


def unreachable_reason(
    url: str, timeout: float = TIMEOUT, deadline: Deadline | None = None
) -> str | None:
    """Why ``url`` cannot be reached, or None when it answers (or the answer is unclear)."""
    if not url.startswith(("http://", "https://")):
        return None
    try:
        # The status is enough; the request ends within timeout, a slow server or not.
        fetch(url.rstrip("/") + "/", timeout=timeout, max_bytes=0, deadline=deadline)
        return None
    except urllib.error.HTTPError:
        return None
    except urllib.error.URLError as exc:
        return _network_reason(exc.reason)
    except TimeoutError:
        return "timed out"
    except OSError as exc:
        return _network_reason(exc)


def _network_reason(reason: object) -> str | None:
    if isinstance(reason, ConnectionRefusedError):
        return "connection refused"
    if isinstance(reason, socket.gaierror):
        return "unknown host"
    if isinstance(reason, (TimeoutError, socket.timeout)):
        return "timed out"
    if isinstance(reason, OSError) and reason.errno in (101, 113):  # network/host unreachable
        return "network unreachable"
    return None


def backend_failure(exc: CommandFailed, plan: InstallPlan, log: Path, kept: str) -> InstallFailed:
    """The error a failed backend command ends an install or a download with: what it was doing,
    the cause (:func:`failure_cause`), ``kept`` (what is left of the attempt), the fix and the
    log."""
    cause = failure_cause(exc.output, plan)
    return InstallFailed(
        f"{step_name(exc.argv)} failed: {cause.message} {kept}",
        hint=f"{cause.hint} Full log: {log}",
        log=log,
        tail=exc.output,
    )


def failure_cause(output: str, plan: InstallPlan) -> Cause:
    """The cause of a backend failure: from its output, else from probing the plan's indexes."""
    conflict = user_conflict(output, plan)
    if conflict is not None:
        return conflict
    cause = explain(output, plan)
    if cause.code in _FROM_OUTPUT:
        return cause
    deadline = Deadline.after(DIAGNOSIS_SECONDS)
    for route in plan.routes:
        reason = unreachable_reason(route.url, deadline=deadline) if route.url else None
        if reason == "unknown host":
            return dns_cause(str(route.url), plan)
        if reason is not None:
            return Cause(
                "unreachable",
                f"the {route.name} index at {route.url} could not be reached ({reason}).",
                cause_hint("unreachable"),
            )
    found = http_error_cause(plan, deadline=deadline)
    if found is None and cause.code == "unknown":  # nothing else said: the disk, if nearly full
        found = _nearly_full(plan)
    return found or cause


LOW_SPACE = 1 << 30
"""Free bytes below which a failure with no cause in its output is put down to a full disk."""


def _nearly_full(plan: InstallPlan) -> Cause | None:
    """A full disk that the output does not name: ``python -m venv`` reports a failed ensurepip
    as "returned non-zero exit status 1" alone, and a backend deletes what it had written, so
    the space is free again by now, but little is. The filesystems the install writes to: the
    environment's (its staging folder is built beside it) and the temporary folder."""
    import shutil
    import tempfile

    folders = [Path(plan.venv).absolute().parent] if plan.venv else []
    folders.append(Path(tempfile.gettempdir()))
    for folder in folders:
        try:
            free = shutil.disk_usage(folder).free
        except OSError:
            continue
        if free < LOW_SPACE:
            return Cause(
                "disk-full",
                f"the filesystem of {folder} has only {size_label(free)} free: a full disk is the "
                "likely cause (the backend's own message does not say).",
                cause_hint("disk-full"),
            )
    return None


_FROM_OUTPUT = ("hash-mismatch", "corrupt-wheel", "download-cut", "stalled", "dns", "disk-full")


def http_error_cause(
    plan: InstallPlan, timeout: float = TIMEOUT, deadline: Deadline | None = None
) -> Cause | None:
    """An index that answers a pinned package's page with an HTTP error (pip does not say so)."""
    for route in plan.routed:
        for package in plan.packages_from(route.name):
            page = f"{str(route.url).rstrip('/')}/{package.name}/"
            status = _http_status(page, timeout, deadline)
            if status is not None and (status >= 500 or status in (401, 403)):
                return Cause(
                    "http-error",
                    f"the {route.name} index at {route.url} returned HTTP {status} for {page}.",
                    cause_hint("http-error"),
                )
    return None


def _http_status(url: str, timeout: float, deadline: Deadline | None) -> int | None:
    if not url.startswith(("http://", "https://")):
        return None
    try:
        fetch(url, timeout=timeout, max_bytes=0, deadline=deadline)
        return None
    except urllib.error.HTTPError as exc:
        return exc.code
    except (OSError, ValueError):
        return None


def step_name(argv: Sequence[str]) -> str:
    """What a failed backend command was doing, in words."""
    tool = "uv" if Path(argv[0]).name == "uv" else "pip"
    if "venv" in argv or "ensurepip" in argv:
        return "Creating the staging environment"
    if "download" in argv:
        return "Downloading with pip"
    return f"Installing with {tool}"
