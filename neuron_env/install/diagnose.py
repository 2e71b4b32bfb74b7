"""Turn a failed backend's output into one sentence a person can act on.

Pure: matches known pip and uv messages (index unreachable, nothing matches a pin, a hash that
does not match, a corrupt wheel, a download cut off) and names the plan's index involved.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from neuron_env.install.plan import InstallPlan


@dataclass(frozen=True)
class Cause:
    """Why a backend failed, and what to do about it."""

    code: str
    message: str
    hint: str


_PATTERNS: tuple[tuple[str, str, str], ...] = (
    (
        "hash-mismatch",
        r"do not match the hashes|hash mismatch|hashes? (?:do(?:es)? not|didn't) match",
        "a downloaded file does not match the sha256 its index or the wheelhouse lists: it is "
        "corrupt or was replaced, and was refused.",
    ),
    (
        "corrupt-wheel",
        r"badzipfile|not a zip file|invalid zip|failed to extract|failed to read from zip|"
        r"invalid package format|is not a valid wheel|wheel '[^']*' located at .* is invalid|"
        r"corrupt",
        "a downloaded wheel is corrupt (not a readable zip archive) and was refused.",
    ),
    (
        "download-cut",
        r"incompleteread|connection broken|connection reset|error decoding response body|"
        r"connection closed|unexpected eof|end of file before message",
        "a download was cut off (the index stopped answering in the middle of a file).",
    ),
    (
        "unreachable",
        r"connection refused|failed to establish a new connection|name or service not known|"
        r"dns error|timed out|could not fetch url|failed to fetch|max retries exceeded|"
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


def explain(output: str, plan: InstallPlan) -> Cause:
    """The most specific known cause found in ``output``."""
    lowered = output.lower()
    index = _index_mentioned(output, plan)
    for code, pattern, sentence in _PATTERNS:
        if re.search(pattern, lowered):
            return Cause(code, _with_index(sentence, index, code), cause_hint(code))
    return Cause("unknown", "the backend failed (see its last lines below).", cause_hint(""))


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
    return f"{sentence.rstrip('.')}; it came from {index}."


def cause_hint(code: str) -> str:
    """What to do about a cause."""
    if code == "unreachable":
        return (
            "Check the network or proxy and retry; for a mirror, pass --neuron-index, "
            "--pytorch-index or --index-url."
        )
    if code in ("hash-mismatch", "corrupt-wheel", "download-cut"):
        return "Retry; if it persists, the index or mirror serves a broken file."
    if code == "no-match":
        return "Check that the index serves the pinned versions for this Python and platform."
    return "Read the log and retry."
