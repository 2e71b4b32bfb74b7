"""Every program in tests/data/scan/corpus says, line by line, what scan must report there.

A line ending in ``# expect: rule-a, rule-b`` must produce exactly those findings (by rule id);
every other line must produce none. ``# release: X`` on the first line picks the release's rules
(default: the newest shipped release). The trap file expects nothing at all: false positives fail.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from neuron_env.matrix import load_matrix
from neuron_env.scan import rules_for, scan_file
from tests.conftest import DATA

CORPUS = DATA / "scan" / "corpus"
EXPECT = re.compile(r"#\s*expect:\s*([\w\-, ]+)")
RELEASE = re.compile(r"#\s*release:\s*(\S+)")


def expected(path: Path) -> Counter[tuple[int, str]]:
    wanted: Counter[tuple[int, str]] = Counter()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = EXPECT.search(line)
        if match:
            wanted.update((number, rule.strip()) for rule in match.group(1).split(","))
    return wanted


def release_of(path: Path) -> str | None:
    match = RELEASE.match(path.read_text(encoding="utf-8").splitlines()[0])
    return match.group(1) if match else None


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.py")), ids=lambda p: p.stem)
def test_scan_reports_exactly_the_expected_findings(path: Path) -> None:
    rules = rules_for(load_matrix().get(release_of(path)))
    found = Counter((f.span.line, f.rule.id) for f in scan_file(path, path.name, rules))
    assert found == expected(path)


def test_the_trap_file_is_really_full_of_lookalikes() -> None:
    text = (CORPUS / "traps_no_findings.py").read_text(encoding="utf-8")
    for lookalike in ("xm.mark_step()", "sparse.mm", '"xla"', "re.compile", "np.float64"):
        assert lookalike in text
    assert not expected(CORPUS / "traps_no_findings.py")
