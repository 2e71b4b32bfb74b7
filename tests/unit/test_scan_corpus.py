"""Every program in tests/data/scan/corpus says, line by line, what scan must report there.

A line ending in ``# expect: rule-a, rule-b`` must produce exactly those findings (by rule id);
every other line must produce none. ``# release: X`` on the first line picks the release's rules
(default: the newest shipped release). The trap files expect nothing at all: false positives fail.
Python files, shell scripts (by extension or shebang) and notebooks (per cell, lines counted in
the cell) are all read this way.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from neuron_env.matrix import load_matrix
from neuron_env.scan import rules_for, scan_file
from tests.support.cli import DATA

CORPUS = DATA / "scan" / "corpus"
EXPECT = re.compile(r"#\s*expect:\s*([\w\-, ]+)")
# Where a line cannot carry a comment (a Dockerfile instruction): `# expect at line N: rule`.
EXPECT_AT = re.compile(r"^#\s*expect at line (\d+):\s*([\w\-, ]+)$")
RELEASE = re.compile(r"#\s*release:\s*(\S+)")


CORPUS_FILES = sorted(
    p
    for p in CORPUS.iterdir()
    if p.suffix in (".py", ".sh", ".ipynb", ".sbatch", ".yaml")
    or p.name in ("launch_by_shebang", "Dockerfile.xla")
)


def cells(path: Path) -> list[tuple[int | None, str]]:
    """(cell number, text) of each part of a file that has its own line numbers."""
    if path.suffix != ".ipynb":
        return [(None, path.read_text(encoding="utf-8"))]
    notebook = json.loads(path.read_text(encoding="utf-8"))
    return [(n, "".join(c["source"])) for n, c in enumerate(notebook["cells"], start=1)]


def expected(path: Path) -> Counter[tuple[int | None, int, str]]:
    wanted: Counter[tuple[int | None, int, str]] = Counter()
    for cell, text in cells(path):
        for number, line in enumerate(text.splitlines(), start=1):
            match = EXPECT.search(line)
            if match:
                wanted.update((cell, number, rule.strip()) for rule in match.group(1).split(","))
            elif at := EXPECT_AT.match(line):
                rules = at.group(2).split(",")
                wanted.update((cell, int(at.group(1)), rule.strip()) for rule in rules)
    return wanted


def release_of(path: Path) -> str | None:
    match = RELEASE.match(path.read_text(encoding="utf-8").splitlines()[0])
    return match.group(1) if match else None


@pytest.mark.parametrize("path", CORPUS_FILES, ids=lambda p: p.name)
def test_scan_reports_exactly_the_expected_findings(path: Path) -> None:
    rules = rules_for(load_matrix().get(release_of(path)))
    found = Counter((f.cell, f.span.line, f.rule.id) for f in scan_file(path, path.name, rules))
    assert found == expected(path)


def test_the_corpus_has_every_kind_of_file() -> None:
    kinds = {p.suffix for p in CORPUS_FILES}
    assert {".py", ".sh", ".ipynb", "", ".sbatch", ".yaml", ".xla"} <= kinds
    assert len([p for p in CORPUS_FILES if p.name.startswith("traps_")]) >= 4


def test_the_trap_file_is_really_full_of_lookalikes() -> None:
    text = (CORPUS / "traps_no_findings.py").read_text(encoding="utf-8")
    for lookalike in ("xm.mark_step()", "sparse.mm", '"xla"', "re.compile", "np.float64"):
        assert lookalike in text
    assert not expected(CORPUS / "traps_no_findings.py")


def per_rule_counts() -> dict[str, tuple[int, int, int]]:
    """rule id → (true positives, false positives, missed) over the whole corpus."""
    counts: dict[str, list[int]] = {}
    for path in CORPUS_FILES:
        rules = rules_for(load_matrix().get(release_of(path)))
        found = Counter((f.cell, f.span.line, f.rule.id) for f in scan_file(path, path.name, rules))
        wanted = expected(path)
        for part, index in ((found & wanted, 0), (found - wanted, 1), (wanted - found, 2)):
            for (_, _, rule), n in part.items():
                counts.setdefault(rule, [0, 0, 0])[index] += n
    return {rule: (c[0], c[1], c[2]) for rule, c in counts.items()}


def test_every_rule_has_precision_and_recall_of_at_least_95_percent() -> None:
    """Per rule, not only overall: a rare rule's misses cannot hide behind a frequent one's."""
    counts = per_rule_counts()
    for rule, (true, false_positive, missed) in sorted(counts.items()):
        if rule == "scan-error":
            continue
        assert true / (true + false_positive) >= 0.95, f"{rule}: precision"
        assert true / (true + missed) >= 0.95, f"{rule}: recall"


def test_the_corpus_labels_every_rule_of_the_xla_line_through_libraries_and_launchers() -> None:
    counts = per_rule_counts()
    for rule in ("xla-library", "xla-trace", "xla-traced-save", "xla-pjrt-env", "xla-era-env",
                 "xla-launch-size", "float64"):  # fmt: skip
        assert counts.get(rule, (0, 0, 0))[0] >= 2, f"{rule} has too few labelled sites"
