"""Turn a failed backend's output into one sentence a person can act on.

Pure: matches known pip and uv messages (a full disk, a hash that does not match, a stalled
download, a corrupt wheel, a host that does not resolve, a download cut off, an HTTP error, an
index unreachable, nothing matches a pin) and names the plan's index involved.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from neuron_env.frozen import frozen
from neuron_env.install.plan import InstallPlan


@frozen
class Cause:
    """Why a backend failed, and what to do about it."""

    code: str
    message: str
    hint: str


_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (
        "disk-full",
        r"no space left on device|disk quota exceeded|os error 28\b|errno 28\b",
        "the disk is full (No space left on device).",
    ),
    (
        "hash-mismatch",
        r"do not match the hashes|hash mismatch|hashes? (?:do(?:es)? not|didn't) match",
        "a downloaded file does not match the sha256 its index or the wheelhouse lists: it is "
        "corrupt or was replaced, and was refused.",
    ),
    (
        "stalled",
        r"download stalled|network timeout|read timed out|readtimeout|operation timed out",
        "a download stalled or timed out (the index stopped sending data).",
    ),
    (
        "corrupt-wheel",
        r"badzipfile|not a zip file|invalid zip|failed to extract|failed to read from zip|"
        r"invalid package format|is not a valid wheel|wheel '[^']*' located at .* is invalid|"
        r"corrupt",
        "a downloaded wheel is corrupt (not a readable zip archive) and was refused.",
    ),
    (
        "dns",
        r"name or service not known|temporary failure in name resolution|nodename nor servname|"
        r"failed to lookup address|dns error|no address associated with hostname|"
        r"getaddrinfo failed",
        "a host name could not be resolved (DNS lookup failed).",
    ),
    (
        "download-cut",
        # not urllib3's "Retrying ... after connection broken by 'NewConnectionError(...)'": a
        # connection that never opened (refused, unroutable) is an index not reached
        r"incompleteread|connection broken(?! by '(?:newconnectionerror|connecttimeouterror))|"
        r"connection reset|error decoding response body|"
        r"connection closed|unexpected eof|end of file before message",
        "a download was cut off (the index stopped answering in the middle of a file).",
    ),
    (
        "http-error",
        r"http status (?:server|client) error|\b[45]\d\d (?:server|client) error|"
        r"http error [45]\d\d",
        "an index answered with an HTTP error.",
    ),
    (
        "unreachable",
        r"connection refused|failed to establish a new connection|"
        r"timed out|could not fetch url|failed to fetch|max retries exceeded|"
        r"network is unreachable|request failed after",
        "an index could not be reached.",
    ),
    (
        "no-match",
        r"no matching distribution|could not find a version|no version of|unsatisfiable|"
        r"no solution found|not found in the package registry|conflicting dependencies",
        "no package on the indexes matches a pin (or the pins' dependencies conflict).",
    ),
)
_HTTP_STATUS = re.compile(r"\b([45]\d\d)\b(?: internal| server| client| not| forbidden|\))", re.I)


def explain(output: str, plan: InstallPlan) -> Cause:
    """The most specific known cause found in ``output``."""
    lowered = output.lower()
    index = _index_mentioned(output, plan)
    for code, pattern, sentence in _PATTERNS:
        if re.search(pattern, lowered):
            if code == "dns":
                return dns_cause(output, plan)
            if code == "http-error":
                sentence = _http_sentence(output)
            return Cause(code, _with_index(sentence, index, code), cause_hint(code))
    return Cause("unknown", "the backend failed (see its last lines below).", cause_hint(""))


def dns_cause(output: str, plan: InstallPlan) -> Cause:
    """Which host could not be resolved: a routed index's host named in ``output``, if any."""
    for route in plan.routes:
        host = urlsplit(route.url).hostname if route.url else None
        if host and host in output:
            return Cause(
                "dns",
                f"cannot resolve host {host} (DNS lookup failed): the {route.name} index at "
                f"{route.url} could not be reached.",
                cause_hint("dns"),
            )
    named = re.search(r"host='([^']+)'|https?://([^/:\s)]+)", output)
    host = next((g for g in named.groups() if g), None) if named else None
    what = f"cannot resolve host {host}" if host else "cannot resolve a host name"
    return Cause("dns", f"{what} (DNS lookup failed).", cause_hint("dns"))


def _http_sentence(output: str) -> str:
    status = _HTTP_STATUS.search(output)
    if status is None:
        return "an index answered with an HTTP error."
    return f"the index returned HTTP {status.group(1)}."


def _index_mentioned(output: str, plan: InstallPlan) -> str | None:
    """The routed index whose URL occurs last in the output, described for a person."""
    found: tuple[int, str] | None = None
    for route in plan.routes:
        if route.url is None:
            continue
        position = output.rfind(route.url)
        if position >= 0 and (found is None or position > found[0]):
            found = (position, f"the {route.name} index at {route.url}")
    return found[1] if found else None


def _with_index(sentence: str, index: str | None, code: str) -> str:
    if index is None:
        return sentence
    if code == "unreachable":
        return f"{index} could not be reached."
    if code == "http-error":
        return sentence.replace("the index", index, 1).replace("an index", index, 1)
    return f"{sentence.rstrip('.')}; it came from {index}."


def cause_hint(code: str) -> str:
    """What to do about a cause."""
    if code == "unreachable":
        return (
            "Check the network or proxy and retry; for a mirror, pass --neuron-index, "
            "--pytorch-index or --index-url."
        )
    if code == "dns":
        return (
            "Check the host name in the index URL and the machine's DNS, then retry; for a "
            "mirror, pass --neuron-index, --pytorch-index or --index-url."
        )
    if code == "disk-full":
        return (
            "Free space on the disk of the environment and of the backend's cache "
            "(~/.cache/uv, ~/.cache/pip), then retry."
        )
    if code == "stalled":
        return (
            "Retry; on a slow link raise the backend's timeout (UV_HTTP_TIMEOUT, "
            "PIP_DEFAULT_TIMEOUT). If it persists, the index or mirror stalls."
        )
    if code == "http-error":
        return "The index or mirror is failing: retry later, or point to a working mirror."
    if code in ("hash-mismatch", "corrupt-wheel", "download-cut"):
        return "Retry; if it persists, the index or mirror serves a broken file."
    if code == "no-match":
        return "Check that the index serves the pinned versions for this Python and platform."
    return "Read the log and retry."
