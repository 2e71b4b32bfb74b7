"""docs/security.md names the test behind each promise: every test file and test it names exists,
so the page cannot point at a proof that was renamed or removed."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "security.md").read_text()
TESTS = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))


def test_every_test_file_the_page_names_exists() -> None:
    files = set(re.findall(r"`(tests/[\w/]+\.py)", PAGE))
    assert files, "the page names no test file"
    assert [f for f in sorted(files) if not (ROOT / f).is_file()] == []


def test_every_test_the_page_names_is_defined() -> None:
    names = set(re.findall(r"`(test_\w+)`", PAGE)) | set(re.findall(r"\((test_\w+)", PAGE))
    assert len(names) > 20
    assert [n for n in sorted(names) if f"def {n}(" not in TESTS] == []


def test_every_host_scenario_the_page_names_exists() -> None:
    for name in ("core-range-huge", "core-range-backwards", "core-range-past-trn2-48xlarge"):
        assert name in PAGE
        assert (ROOT / "tests" / "data" / "hosts" / name / "scenario.toml").is_file()
