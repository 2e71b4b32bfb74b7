"""``--redact``: what identifies a host or a person leaves a facts snapshot or a report; what
judges it stays.

Removed, everywhere it appears (environment variables, paths, pip URLs, neuron-ls output,
findings): the host name; EC2 instance ids (``i-…``); 12-digit AWS account ids (in ARNs too);
IPv4 and IPv6 addresses and the EC2 host names built from them (``ip-10-0-1-23``); MAC addresses;
user names in paths (``/home/<name>/``, ``/Users/<name>/`` and the same path segment elsewhere);
credentials in URLs (``https://user:token@host``). Kept: every version (a version field is never
read as an address: ``torch-neuronx 2.14.3.1`` is not an IP), the OS, the kernel, the instance
type, the region and availability zone, the AMI id (public images are how a host is rebuilt),
device counts, and the names (not the values) of what was removed.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from neuron_env.facts import HostFacts

if TYPE_CHECKING:
    from neuron_env.checks.model import DoctorReport

HOST = "<host>"
USER = "<user>"
INSTANCE = "i-<redacted>"
ACCOUNT = "<account>"
ADDRESS = "<ip>"
MAC = "<mac>"
CREDENTIALS = "<credentials>"

# Fields whose values are versions: addresses are never looked for there (2.14.3.1 is a version).
VERSION_KEYS = frozenset(
    {"version", "version_id", "module_version", "kernel", "glibc", "requires_dist", "packages"}
)
_HOME = re.compile(r"(?<=/)(home|Users)/([^/\s:;\"']+)")
_PATTERNS = [
    (re.compile(r"(?<=://)[^/@\s]+@"), CREDENTIALS + "@"),
    (re.compile(r"\bi-(?:[0-9a-f]{17}|[0-9a-f]{8})\b"), INSTANCE),
    (re.compile(r"\bip-\d{1,3}-\d{1,3}-\d{1,3}-\d{1,3}\b"), "ip-" + ADDRESS),
    (re.compile(r"(?<![\w:-])(?:[0-9A-Fa-f]{2}[:-]){5}[0-9A-Fa-f]{2}(?![\w:-])"), MAC),
]
_ADDRESS_PATTERNS = [
    (
        re.compile(
            r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])"
        ),
        ADDRESS,
    ),
    # IPv6: eight groups, or a compressed form with "::" (a time such as 10:11:12 is neither).
    (re.compile(r"(?<![\w:.])(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}(?![\w:])"), ADDRESS),
    (
        re.compile(
            r"(?<![\w:.])(?=[0-9A-Fa-f:]*[0-9A-Fa-f])(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?::(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?(?![\w:])"
        ),
        ADDRESS,
    ),
    (re.compile(r"(?<!\d)\d{12}(?!\d)"), ACCOUNT),
]


class Redactor:
    """Redacts strings and JSON-like documents for one host.

    ``literals`` (the host name, the addresses found in the facts) are replaced wherever they
    appear, versions included; the address patterns only where no version is expected, so a
    finding that says "torch-neuronx 2.14.3.1" keeps it while one quoting a variable's address
    loses that address.
    """

    def __init__(self, literals: dict[str, str], users: Iterable[str]) -> None:
        self._literals = sorted(literals.items(), key=lambda item: len(item[0]), reverse=True)
        self._users = sorted({u for u in users if u and u != USER}, key=len, reverse=True)

    def text(self, value: str, *, version: bool = False) -> str:
        """``value`` redacted; a ``version`` field keeps its dotted numbers."""
        for literal, replacement in self._literals:
            value = re.sub(rf"(?<![\w.:-]){re.escape(literal)}(?![\w:-])", replacement, value)
        value = _HOME.sub(lambda m: f"{m.group(1)}/{USER}", value)
        for user in self._users:  # the same user's other folders: /scratch/alice/cache
            value = re.sub(rf"(?<=/){re.escape(user)}(?=/|$|[\s:;\"'])", USER, value)
        patterns = _PATTERNS if version else [*_PATTERNS, *_ADDRESS_PATTERNS]
        for pattern, replacement in patterns:
            value = pattern.sub(replacement, value)
        return value

    def document(self, doc: Any, *, version: bool = False) -> Any:
        """A decoded JSON document with every string (keys of variables too) redacted."""
        if isinstance(doc, str):
            return self.text(doc, version=version)
        if isinstance(doc, list):
            return [self.document(v, version=version) for v in doc]
        if isinstance(doc, dict):
            return {
                self.text(str(k), version=True): self.document(
                    v, version=version or _holds_versions(k)
                )
                for k, v in doc.items()
            }
        return doc


def _holds_versions(key: object) -> bool:
    return str(key) in VERSION_KEYS or str(key).endswith("_version")


def redactor_for(facts: HostFacts) -> Redactor:
    """The redactor for ``facts``: its host name, the addresses and the user names it holds."""
    from neuron_env.serialize import to_jsonable

    doc = to_jsonable(facts)
    literals = {name: HOST for name in _host_names(facts.hostname)}
    for text in _strings(doc, version=False):
        for pattern, replacement in _ADDRESS_PATTERNS:
            literals.update((found.group(), replacement) for found in pattern.finditer(text))
    users = [user for text in _strings(doc, version=True) for _, user in _HOME.findall(text)]
    return Redactor(literals, users)


def _host_names(hostname: str | None) -> list[str]:
    """The name and, for a fully qualified one, its first label (at least two characters)."""
    if not hostname or len(hostname) < 2:
        return []
    short = hostname.split(".")[0]
    return [hostname, short] if len(short) > 1 else [hostname]


def redact_facts(facts: HostFacts) -> HostFacts:
    """``facts`` with identifying values replaced (see the module docstring for what goes)."""
    from neuron_env.schema import JSON_LENIENT, parse
    from neuron_env.serialize import to_jsonable

    redacted = redactor_for(facts).document(to_jsonable(facts))
    result: HostFacts = parse(HostFacts, redacted, ["facts"], JSON_LENIENT)
    return result


def redact_report(report: DoctorReport) -> DoctorReport:
    """A doctor report judged on the real facts, shown with them and its texts redacted."""
    redactor = redactor_for(report.facts)
    findings = tuple(
        dataclasses.replace(
            f,
            summary=redactor.text(f.summary, version=True),
            detail=redactor.text(f.detail, version=True),
            fix=redactor.text(f.fix, version=True),
        )
        for f in report.findings
    )
    return dataclasses.replace(
        report,
        findings=findings,
        facts=redact_facts(report.facts),
        release_reason=redactor.text(report.release_reason, version=True),
        torch_reason=redactor.text(report.torch_reason, version=True),
        next_step=redactor.text(report.next_step, version=True),
    )


def _strings(doc: Any, *, version: bool) -> Iterable[str]:
    """Every string in ``doc`` (keys too); without ``version``, those outside version fields."""
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, list):
        for value in doc:
            yield from _strings(value, version=version)
    elif isinstance(doc, dict):
        for key, value in doc.items():
            yield str(key)
            if version or not _holds_versions(key):
                yield from _strings(value, version=version)
