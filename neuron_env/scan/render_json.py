"""Machine-readable reports: the ``neuron-env/scan/v1`` JSON payload and SARIF 2.1.0.

SARIF is what GitHub code scanning reads (``github/codeql-action/upload-sarif``): each rule carries
its id, short description, help URI and default level; each result its level and a region with
1-based line and column (``columnKind`` ``unicodeCodePoints``), the URI relative to ``%SRCROOT%``,
and a ``partialFingerprints`` entry that does not depend on the line (rule, file, cell, message
and the how-manieth such finding), so an alert survives code moving above it.

GitHub shows at most 5,000 results of a run: above that, each rule keeps its first findings (most
severe first) and one more result per rule says how many were folded into it; the run's
``properties.folded`` counts them per rule, and the JSON report always lists every finding.
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

from neuron_env import __version__
from neuron_env.resources import docs_page
from neuron_env.scan.model import Finding, Rule, RuleSet, ScanReport, Severity, rank

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = docs_page("commands/scan/")
ROOT_ID = "%SRCROOT%"
SARIF_RESULT_LIMIT = 5000  # GitHub code scanning displays at most this many results per run
FINGERPRINT = "neuronEnvFinding/v1"


def scan_payload(report: ScanReport, fail_on: Severity) -> dict[str, Any]:
    """The body of the ``neuron-env/scan/v1`` envelope."""
    return {
        "release": report.rules.release,
        "root": report.root,
        "fail_on": fail_on,
        "exit_code": report.exit_code(fail_on),
        "files": list(report.files),
        "counts": report.counts(),
        "rules": rules_json(report.rules),
        "findings": [_finding_json(item) for item in report.findings],
    }


def rules_json(rules: RuleSet) -> list[dict[str, Any]]:
    """Every rule of a release, as plain data."""
    return [_rule_json(rule) for rule in rules.rules]


def _rule_json(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.id,
        "category": rule.category,
        "severity": rule.severity,
        "title": rule.title,
        "description": rule.description,
        "help_uri": rule.help_uri,
        "confirmed": rule.confirmed,
        "origin": rule.origin,
        "fixable": rule.fix is not None,
    }


def _finding_json(item: Finding) -> dict[str, Any]:
    span, fix = item.span, item.fix
    return {
        "rule": item.rule.id,
        "severity": item.severity,
        "path": item.path,
        "line": span.line,
        "column": span.column,
        "end_line": span.end_line,
        "end_column": span.end_column,
        "message": item.message,
        "suggestion": item.suggestion,
        "confirmed": item.rule.confirmed,
        "help_uri": item.rule.help_uri,
        "fix": {"old": fix.old, "new": fix.new} if fix else None,
        "cell": item.cell,
    }


def sarif_document(report: ScanReport, limit: int = SARIF_RESULT_LIMIT) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log with one run of fewer than ``limit`` results."""
    rules = list(report.rules.rules)
    index = {rule.id: i for i, rule in enumerate(rules)}
    fingerprints = _fingerprints(report.findings)
    kept, folded = fold(report.findings, limit)
    results = [_result(item, index[item.rule.id], fingerprints[id(item)]) for item in kept]
    for rule_id, (first, count) in folded.items():
        results.append(_folded_result(first, index[rule_id], count))
    properties: dict[str, Any] = {"neuronRelease": report.rules.release}
    if folded:
        properties["folded"] = {rule_id: count for rule_id, (_, count) in folded.items()}
        properties["foldedResults"] = sum(count for _, count in folded.values())
    run = {
        "tool": {"driver": _driver(rules)},
        "originalUriBaseIds": {ROOT_ID: {"uri": Path(report.root).resolve().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": results,
        "properties": properties,
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def fold(
    findings: Sequence[Finding], limit: int
) -> tuple[list[Finding], dict[str, tuple[Finding, int]]]:
    """(findings kept, rule id → (first folded finding, how many folded)), kept + folded < limit.

    Every rule keeps up to the same number of findings, the largest that fits, so a rule with
    few findings loses none of them to one with thousands.
    """
    if len(findings) < limit:
        return list(findings), {}
    by_rule: dict[str, list[Finding]] = {}
    for item in sorted(findings, key=lambda f: (-rank(f.severity), f.sort_key)):
        by_rule.setdefault(item.rule.id, []).append(item)
    sizes = [len(items) for items in by_rule.values()]

    def total(cap: int) -> int:
        return sum(min(n, cap) + (n > cap) for n in sizes)

    low, high = 0, max(sizes)  # total() grows with the cap: the largest cap that fits
    while low < high:
        middle = (low + high + 1) // 2
        low, high = (middle, high) if total(middle) < limit else (low, middle - 1)
    cap = low
    kept = sorted((f for items in by_rule.values() for f in items[:cap]), key=lambda f: f.sort_key)
    folded = {r: (items[cap], len(items) - cap) for r, items in by_rule.items() if len(items) > cap}
    return kept, folded


def _fingerprints(findings: Sequence[Finding]) -> dict[int, str]:
    seen: Counter[str] = Counter()
    prints = {}
    for item in findings:
        key = "\0".join([item.rule.id, item.path, str(item.cell or ""), item.message])
        # surrogateescape: a file name that is not UTF-8 hashes as its own bytes
        digest = hashlib.sha256(key.encode("utf-8", "surrogateescape")).hexdigest()[:32]
        seen[digest] += 1
        prints[id(item)] = f"{digest}:{seen[digest]}"
    return prints


def _driver(rules: list[Rule]) -> dict[str, Any]:
    return {
        "name": "neuron-env",
        "version": __version__,
        "informationUri": INFORMATION_URI,
        "rules": [_sarif_rule(rule) for rule in rules],
    }


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "id": rule.id,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.description},
        "help": {"text": rule.suggestion},
        "defaultConfiguration": {"level": rule.severity},
        "properties": {
            "tags": ["neuron", rule.category],
            "confirmed": rule.confirmed,
            "origin": rule.origin,
        },
    }
    if rule.help_uri:
        entry["helpUri"] = rule.help_uri
    return entry


def _result(item: Finding, rule_index: int, fingerprint: str) -> dict[str, Any]:
    result = _location_result(item, rule_index, f"{item.message} {item.suggestion}")
    result["partialFingerprints"] = {FINGERPRINT: fingerprint}
    result["properties"] = {"confirmed": item.rule.confirmed, "fixable": item.fix is not None}
    if item.cell is not None:
        result["properties"]["cell"] = item.cell
    return result


def _folded_result(first: Finding, rule_index: int, count: int) -> dict[str, Any]:
    text = (
        f"{count:,} more '{first.rule.id}' finding{'' if count == 1 else 's'} folded here, "
        f"from this place on, to keep the run under {SARIF_RESULT_LIMIT:,} results "
        "(GitHub shows no more): "
        "neuron-env scan --format json lists every finding."
    )
    result = _location_result(first, rule_index, text)
    result["properties"] = {"folded": count}
    return result


def _location_result(item: Finding, rule_index: int, text: str) -> dict[str, Any]:
    span = item.span
    region = {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }
    where = f"cell {item.cell}: " if item.cell is not None else ""
    return {
        "ruleId": item.rule.id,
        "ruleIndex": rule_index,
        "level": item.severity,
        "message": {"text": where + text},
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact(item.path), "region": region}}
        ],
    }


def _artifact(path: str) -> dict[str, str]:
    # Every scanned file is under the root (the scan refuses others): relative to %SRCROOT%. A
    # name that is not UTF-8 is percent-encoded byte for byte, as Path.as_uri() does.
    return {"uri": quote(os.fsencode(path)), "uriBaseId": ROOT_ID}
