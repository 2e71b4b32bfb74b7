"""Machine-readable reports: the ``neuron-env/scan/v1`` JSON payload and SARIF 2.1.0.

SARIF is what GitHub code scanning reads (``github/codeql-action/upload-sarif``): each rule carries
its id, short description, help URI and default level; each result its level and a region with
1-based line and column (``columnKind`` ``unicodeCodePoints``), the URI relative to ``%SRCROOT%``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

from neuron_env import __version__
from neuron_env.scan.model import Finding, Rule, RuleSet, ScanReport, Severity

SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
INFORMATION_URI = "https://github.com/neuron-env/neuron-env"
ROOT_ID = "%SRCROOT%"


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


def sarif_document(report: ScanReport) -> dict[str, Any]:
    """The report as a SARIF 2.1.0 log with one run."""
    rules = list(report.rules.rules)
    index = {rule.id: i for i, rule in enumerate(rules)}
    run = {
        "tool": {"driver": _driver(rules)},
        "originalUriBaseIds": {ROOT_ID: {"uri": Path(report.root).resolve().as_uri() + "/"}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(item, index[item.rule.id]) for item in report.findings],
        "properties": {"neuronRelease": report.rules.release},
    }
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


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


def _result(item: Finding, rule_index: int) -> dict[str, Any]:
    span = item.span
    region = {
        "startLine": span.line,
        "startColumn": span.column,
        "endLine": span.end_line,
        "endColumn": span.end_column,
    }
    return {
        "ruleId": item.rule.id,
        "ruleIndex": rule_index,
        "level": item.severity,
        "message": {"text": f"{item.message} {item.suggestion}"},
        "locations": [
            {"physicalLocation": {"artifactLocation": _artifact(item.path), "region": region}}
        ],
        "properties": {"confirmed": item.rule.confirmed, "fixable": item.fix is not None},
    }


def _artifact(path: str) -> dict[str, str]:
    if path.startswith("/"):  # outside the root: an absolute file URI
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path), "uriBaseId": ROOT_ID}
