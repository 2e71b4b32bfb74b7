"""The rule registry: own rules from rules/scan.toml, limitations from the chosen release."""

from __future__ import annotations

import dataclasses

import pytest

from neuron_env.errors import EXIT_BAD_INPUT, MatrixError
from neuron_env.matrix import load_matrix
from neuron_env.scan import load_rule_file, rules_for, scan_file
from tests.support.cli import DATA

CORPUS = DATA / "scan" / "corpus"
MATRIX = load_matrix()


@pytest.mark.parametrize("version", MATRIX.versions())
def test_every_shipped_release_gives_unique_rules_with_https_docs(version: str) -> None:
    rules = rules_for(MATRIX.get(version)).rules
    ids = [rule.id for rule in rules]
    assert len(ids) == len(set(ids))
    assert all(rule.help_uri.startswith("https://") for rule in rules)


def test_limitations_become_rules_only_when_source_code_can_show_them() -> None:
    ids = {rule.id for rule in rules_for(MATRIX.get("2.34.0")).rules}
    assert {"unsupported-apis", "fft-subset", "float64", "compile-dynamic-shapes"} <= ids
    assert "compile-mode" in ids and "torchao-trn3-only" in ids
    assert "compile-needs-device" not in ids  # a platform fact
    assert "cpu-fallback" not in ids  # lists no API


def test_an_unconfirmed_limitation_is_one_level_lower_and_says_so() -> None:
    rules = rules_for(MATRIX.get("2.34.0"))
    unsupported = rules.get("unsupported-apis")
    assert not unsupported.confirmed and unsupported.severity == "warning"  # policy: error
    (first, *_) = scan_file(CORPUS / "unsupported_nested.py", "n.py", rules)
    assert first.severity == "warning" and first.message.endswith("(unconfirmed)")


def test_a_confirmed_limitation_keeps_its_severity_and_no_mark() -> None:
    rules = rules_for(MATRIX.get("2.33.0"))
    findings = scan_file(CORPUS / "torchao_mxfp8.py", "t.py", rules)
    assert {f.severity for f in findings} == {"error"}
    assert not any("unconfirmed" in f.message for f in findings)


def test_what_a_later_release_supports_is_no_longer_reported() -> None:
    findings_233 = scan_file(CORPUS / "torchao_mxfp8.py", "t.py", rules_for(MATRIX.get("2.33.0")))
    findings_234 = scan_file(CORPUS / "torchao_mxfp8.py", "t.py", rules_for(MATRIX.get("2.34.0")))
    assert {f.rule.id for f in findings_233} == {"torchao"}
    assert [(f.span.line, f.rule.id, f.severity) for f in findings_234] == [
        (3, "torchao-trn3-only", "note"),
        (4, "torchao-trn3-only", "note"),
    ]


def test_the_release_data_decides_which_apis_a_limitation_covers() -> None:
    release = MATRIX.get("2.34.0")
    narrowed = [
        dataclasses.replace(lim, apis=("torch.sparse",)) if lim.id == "unsupported-apis" else lim
        for lim in release.limitations
    ]
    rules = rules_for(dataclasses.replace(release, limitations=tuple(narrowed)))
    assert scan_file(CORPUS / "unsupported_func.py", "f.py", rules) == []
    assert scan_file(CORPUS / "unsupported_sparse.py", "s.py", rules)


@pytest.mark.parametrize(
    ("name", "key", "problem"),
    [
        ("unknown-key", "rules[0].titel", "did you mean 'title'?"),
        ("unknown-placeholder", "rules[0].message", "unknown placeholder(s) ['nmae']"),
        ("unknown-severity", "rules[0].severity", "invalid value 'fatal'"),
    ],
)
def test_a_broken_rule_file_names_the_file_and_the_key(name: str, key: str, problem: str) -> None:
    path = DATA / "scan" / "rules" / f"{name}.toml"
    with pytest.raises(MatrixError) as caught:
        load_rule_file(path)
    assert caught.value.file == str(path)
    assert caught.value.key == key
    assert problem in caught.value.problem
    assert caught.value.exit_code == EXIT_BAD_INPUT
