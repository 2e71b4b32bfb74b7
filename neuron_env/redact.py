"""``--redact``: what identifies a host or a person leaves a facts snapshot or a report; what
judges it stays.

The patterns and the :class:`Redactor` are :mod:`neuron_env.redact_text`'s (standard library
only, shared with ``scan``, ``evaluate`` and ``collectives``); this module builds a redactor from
a host's facts.

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
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from neuron_env.facts import HostFacts
from neuron_env.redact_text import (  # the patterns live there: scan may import nothing more
    _ADDRESS_PATTERNS,
    _HOME,
    HOST,
    Redactor,
    _holds_versions,
    host_names,
    running_home,
    running_user,
)

if TYPE_CHECKING:
    from neuron_env.checks.model import DoctorReport

__all__ = [
    "Redactor",
    "host_names",
    "redact_facts",
    "redact_report",
    "redactor_for",
    "running_home",
    "running_user",
]


def redactor_for(facts: HostFacts) -> Redactor:
    """The redactor for ``facts``: its host name, the addresses and the user names it holds."""
    from neuron_env.serialize import to_jsonable

    doc = to_jsonable(facts)
    literals = {name: HOST for name in host_names(facts.hostname)}
    for text in _strings(doc, version=False):
        for pattern, replacement in _ADDRESS_PATTERNS:
            literals.update((found.group(), replacement) for found in pattern.finditer(text))
    users = [user for text in _strings(doc, version=True) for _, user in _HOME.findall(text)]
    users.append(running_user())
    return Redactor(literals, users, running_home())


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

    def said(text: str) -> str:
        return redactor.text(text, version=True)

    summary = dataclasses.replace(
        report.summary,
        allowed_reasons={k: said(v) for k, v in report.summary.allowed_reasons.items()},
        allowed_by={k: said(v) for k, v in report.summary.allowed_by.items()},
    )
    return dataclasses.replace(
        report,
        findings=findings,
        summary=summary,
        facts=redact_facts(report.facts),
        release_reason=said(report.release_reason),
        torch_reason=said(report.torch_reason),
        next_step=said(report.next_step),
        config=said(report.config) if report.config else None,
        config_ignored=tuple((said(p), said(r)) for p, r in report.config_ignored),
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
