"""The rule registry: neuron-env's own rules plus the limitations of one Neuron release.

``rules/scan.toml`` holds the data; this module parses it strictly (the dataclasses below are its
schema) and turns each ``[[limitations]]`` entry of the chosen release into a rule, so that what a
release no longer lists as a limitation is no longer reported.
"""

from __future__ import annotations

import dataclasses
import functools
import string
from collections.abc import Iterator
from dataclasses import field
from pathlib import Path

from neuron_env.errors import MatrixError
from neuron_env.frozen import frozen
from neuron_env.matrix.load import read_toml
from neuron_env.matrix.model import Limitation, Release
from neuron_env.resources import docs_page, scan_rules_file
from neuron_env.scan.model import Detection, FixKind, Rule, RuleSet, Severity, Variant, demote
from neuron_env.schema import SchemaError, parse

SITE_PREFIX = "site:"  # a rule's `docs` naming a page of neuron-env's documentation site

SCHEMA_VERSION = 1
Category = str
PLACEHOLDERS = {"name", "summary"}


@frozen
class RuleSpec:
    """One of neuron-env's own rules, as written in ``rules/scan.toml``."""

    id: str
    category: Category
    severity: Severity
    title: str
    message: str
    suggestion: str
    docs: str
    detect: Detection = field(default_factory=Detection)
    fix: FixKind | None = None
    suggestions: dict[str, str] = field(default_factory=dict)
    variants: dict[str, Variant] = field(default_factory=dict)
    fixes: dict[str, FixKind] = field(default_factory=dict)
    confirmed: bool = True
    """False where no public source was found for what the rule says (reported one level lower)."""


@frozen
class LimitationPolicy:
    """How a release limitation becomes a rule: severity, wording, what to detect."""

    severity: Severity
    title: str
    message: str
    suggestion: str
    docs: str = ""
    detect: Detection = field(default_factory=Detection)
    variants: dict[str, Variant] = field(default_factory=dict)


@frozen
class RuleFile:
    """The whole of ``rules/scan.toml``."""

    schema: int
    rules: tuple[RuleSpec, ...]
    limitation_kinds: dict[str, LimitationPolicy]
    limitations: dict[str, LimitationPolicy]


@functools.cache
def load_rule_file(path: Path | None = None) -> RuleFile:
    """Read and check the rule data; a problem names the file and the key (exit 2)."""
    path = path or scan_rules_file()
    data = read_toml(path)
    if data.get("schema") != SCHEMA_VERSION:
        raise MatrixError(str(path), "schema", f"unknown schema version {data.get('schema')!r}")
    try:
        rule_file = parse(RuleFile, data)
        _check_templates(rule_file)
    except SchemaError as exc:
        raise MatrixError(str(path), exc.key, exc.problem) from None
    return rule_file


def _check_templates(rule_file: RuleFile) -> None:
    """Messages may only use the placeholders scan fills in."""
    for path, text in _messages(rule_file):
        fields = {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}
        if fields - PLACEHOLDERS:
            raise SchemaError(path, f"unknown placeholder(s) {sorted(fields - PLACEHOLDERS)}")


def _messages(rule_file: RuleFile) -> Iterator[tuple[list[str | int], str]]:
    tables: list[tuple[list[str | int], RuleSpec | LimitationPolicy]] = [
        (["rules", i], spec) for i, spec in enumerate(rule_file.rules)
    ]
    tables += [(["limitation-kinds", k], p) for k, p in rule_file.limitation_kinds.items()]
    tables += [(["limitations", k], p) for k, p in rule_file.limitations.items()]
    for path, entry in tables:
        yield [*path, "message"], entry.message
        for name, variant in entry.variants.items():
            yield [*path, "variants", name, "message"], variant.message


def rules_for(release: Release, rule_file: RuleFile | None = None) -> RuleSet:
    """Every rule that applies to ``release``: own rules first, then the release's limitations."""
    data = rule_file or load_rule_file()
    own = [_own_rule(spec, release) for spec in data.rules]
    limits = [_limitation_rule(lim, release, data) for lim in release.limitations]
    rules = [*own, *(rule for rule in limits if rule is not None)]
    ids = [r.id for r in rules]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise MatrixError(
            str(release.origin), "limitations", f"rule id(s) {duplicates} already used"
        )
    return RuleSet(str(release.version), tuple(rules), _oldest_python(release))


def _oldest_python(release: Release) -> tuple[int, int]:
    versions = [
        (int(major), int(minor))
        for pairing in release.pairings
        for major, minor in (python.split(".")[:2] for python in pairing.python)
    ]
    return min(versions, default=(3, 10))


def _own_rule(spec: RuleSpec, release: Release) -> Rule:
    detect, by_api = spec.detect, dict[str, Variant]()
    if detect.library_line:
        detect, by_api = _library_detection(spec, release)
    return Rule(
        id=spec.id,
        category=spec.category,
        severity=spec.severity if spec.confirmed else demote(spec.severity),
        title=spec.title,
        message=spec.message,
        suggestion=spec.suggestion,
        help_uri=_docs_link(release, spec.docs),
        detect=detect,
        confirmed=spec.confirmed,
        fix=spec.fix,
        suggestions=spec.suggestions,
        variants=_variants(spec.variants, spec.confirmed),
        fixes=spec.fixes,
        by_api=by_api,
    )


def _library_detection(spec: RuleSpec, release: Release) -> tuple[Detection, dict[str, Variant]]:
    """The imports and commands of the release's libraries on ``library-line``, each worded
    with the library's own facts from the matrix (what doctor says about it too)."""
    libraries = [lib for lib in release.libraries.values() if lib.line == spec.detect.library_line]
    by_api: dict[str, Variant] = {}
    for library in libraries:
        severity = spec.severity if library.confirmed else demote(spec.severity)
        summary = library.statement().replace("{", "{{").replace("}", "}}")
        message = spec.message.replace("{summary}", summary)
        for key in (*library.imports, *library.commands):
            by_api[key] = Variant(severity, message, library.advice or spec.suggestion)
    detect = dataclasses.replace(
        spec.detect,
        apis=tuple(a for lib in libraries for a in lib.imports),
        commands=tuple(c for lib in libraries for c in lib.commands),
    )
    return detect, by_api


def _limitation_rule(limit: Limitation, release: Release, data: RuleFile) -> Rule | None:
    policy = data.limitations.get(limit.id) or data.limitation_kinds.get(limit.kind)
    if policy is None:
        return None
    related = policy.detect
    detect = dataclasses.replace(
        related,
        apis=(*limit.apis, *(a for api in limit.apis for a in related.related_apis.get(api, ()))),
        methods=(
            *related.methods,
            *(m for api in limit.apis for m in related.related_methods.get(api, ())),
        ),
    )
    if detect.is_empty():
        return None  # nothing in source code shows this limitation
    return Rule(
        id=limit.id,
        category="limitation",
        severity=policy.severity if limit.confirmed else demote(policy.severity),
        title=policy.title,
        message=policy.message,
        suggestion=policy.suggestion,
        help_uri=_docs_link(release, policy.docs, limit.sources),
        detect=detect,
        confirmed=limit.confirmed,
        origin=f"Neuron {release.version}",
        summary=limit.summary,
        variants=_variants(policy.variants, limit.confirmed),
    )


def _variants(variants: dict[str, Variant], confirmed: bool) -> dict[str, Variant]:
    if confirmed:
        return variants
    return {k: Variant(demote(v.severity), v.message, v.suggestion) for k, v in variants.items()}


def _docs_link(release: Release, docs: str, sources: tuple[str, ...] = ()) -> str:
    """A URL as is; ``site:PAGE`` a page of neuron-env's own documentation; else the release's
    [docs] entry; else the first source; else its notes."""
    if docs.startswith("https://"):
        return docs
    if docs.startswith(SITE_PREFIX):
        return docs_page(docs[len(SITE_PREFIX) :])
    candidates = [release.docs.get(docs), *(release.sources.get(s) for s in sources)]
    candidates.append(release.docs.get("release-notes"))
    return next((url for url in candidates if url), "")
