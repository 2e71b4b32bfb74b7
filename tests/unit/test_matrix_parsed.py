"""``matrices/parsed.json``: the shipped files parsed ahead of time, used only where they still
match their TOML byte for byte, and never read from a user's matrix directory."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from subprocess import PIPE

import pytest

from neuron_env.errors import MatrixError
from neuron_env.matrix import load_release_file
from neuron_env.matrix.parsed import PARSED_FILE, parsed_ahead, render
from neuron_env.resources import shipped_matrix_dir
from tests.support.cli import DATA, REPO, CliRunner
from tests.support.pausing import paused_env, wait_until_paused

SHIPPED = sorted(shipped_matrix_dir().glob("*.toml"))
REFRESH = [sys.executable, str(REPO / "scripts" / "refresh_parsed.py")]


def test_the_shipped_parsed_json_is_current() -> None:
    current = (shipped_matrix_dir() / PARSED_FILE).read_text(encoding="utf-8")
    assert current == render(shipped_matrix_dir()), (
        "matrices/parsed.json is stale: run 'python scripts/refresh_parsed.py' after editing "
        "a matrix file"
    )


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.name)
def test_a_shipped_file_parsed_ahead_loads_as_it_does_from_toml(path: Path) -> None:
    lookup = parsed_ahead(shipped_matrix_dir())[path.name]
    assert lookup(path.read_bytes()) is not None  # the document is there and is taken
    assert load_release_file(path, lookup) == load_release_file(path)


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """The shipped matrix directory, copied with its parsed.json."""
    target = tmp_path / "matrices"
    shutil.copytree(shipped_matrix_dir(), target)
    return target


def test_an_edited_file_is_parsed_again(copied: Path) -> None:
    path = copied / "2.33.1.toml"
    text = path.read_text(encoding="utf-8")
    old = load_release_file(path).release.summary
    path.write_text(text.replace(old, "Edited after parsed.json was written."), encoding="utf-8")
    lookup = parsed_ahead(copied)["2.33.1.toml"]
    assert lookup(path.read_bytes()) is None
    edited = load_release_file(path, lookup).release.summary
    assert edited == "Edited after parsed.json was written."


DAMAGED = {
    "empty": "",
    "not JSON": "{not json",
    "a list": "[]",
    "another format": '{"format": 2, "files": {}}',
    "files not a table": '{"format": 1, "files": []}',
    "entry without text": '{"format": 1, "files": {"2.33.0.toml": {"document": {}}}}',
    "document not a table": '{"format": 1, "files": {"2.33.0.toml": {"text": "", "document": []}}}',
    "text with a lone surrogate": '{"format": 1, "files": {"2.33.0.toml": {"text": "\\ud800", '
    '"document": {}}}}',
    "deeply nested": "[" * 100_000 + "]" * 100_000,
    "not UTF-8": '{"format": 1, "files": {"\xff": 1}}',
}


@pytest.mark.parametrize("text", DAMAGED.values(), ids=DAMAGED.keys())
def test_a_damaged_parsed_json_costs_only_the_time(copied: Path, text: str) -> None:
    (copied / PARSED_FILE).write_bytes(text.encode("latin-1"))
    path = copied / "2.33.0.toml"
    lookup = parsed_ahead(copied).get(path.name)
    assert lookup is None or lookup(path.read_bytes()) is None
    assert load_release_file(path, lookup) == load_release_file(shipped_matrix_dir() / path.name)


def forge(directory: Path, name: str, change: dict[str, str]) -> None:
    """A parsed.json whose entry for ``name`` has the file's real text but another document."""
    doc = json.loads((directory / PARSED_FILE).read_text(encoding="utf-8"))
    doc["files"][name]["text"] = (directory / name).read_text(encoding="utf-8")
    doc["files"][name]["document"]["release"].update(change)
    (directory / PARSED_FILE).write_text(json.dumps(doc), encoding="utf-8")


def test_a_parsed_document_is_bounded_and_validated_like_a_parsed_file(copied: Path) -> None:
    forge(copied, "2.33.0.toml", {"summary": "line one\nline two"})
    with pytest.raises(MatrixError, match=r"control character U\+000A"):
        load_release_file(copied / "2.33.0.toml", parsed_ahead(copied)["2.33.0.toml"])
    forge(copied, "2.33.0.toml", {"summary": "One line.", "version": "2.33.9"})
    with pytest.raises(
        MatrixError, match=r"describes release 2\.33\.9 but is named '2\.33\.0\.toml'"
    ):
        load_release_file(copied / "2.33.0.toml", parsed_ahead(copied)["2.33.0.toml"])


def test_a_parsed_json_in_a_user_matrix_directory_is_never_read(
    tmp_path: Path, cli: CliRunner
) -> None:
    user = tmp_path / "mine"
    shutil.copytree(DATA / "matrices" / "newer", user)
    assert subprocess.run([*REFRESH, str(user)], capture_output=True).returncode == 0
    forge(user, "2.99.0.toml", {"summary": "FORGED"})
    doc = json.loads(
        cli("--matrix-dir", str(user), "matrix", "show", "--release", "2.99.0", "--json").stdout
    )
    assert doc["release"]["release"]["summary"] == "A release neuron-env does not ship yet."


def test_refreshing_writes_a_readable_parsed_json_the_loader_takes(copied: Path) -> None:
    (copied / PARSED_FILE).unlink()
    proc = subprocess.run([*REFRESH, str(copied)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"Wrote {copied / PARSED_FILE} (3 matrix files)."
    assert (copied / PARSED_FILE).stat().st_mode & 0o777 == 0o644
    lookups = parsed_ahead(copied)
    assert sorted(lookups) == [p.name for p in SHIPPED]
    assert all(lookups[p.name](p.read_bytes()) is not None for p in SHIPPED)


def test_refreshing_refuses_a_broken_file_and_keeps_the_old_parsed_json(copied: Path) -> None:
    before = (copied / PARSED_FILE).read_bytes()
    (copied / "2.33.1.toml").write_text("release = [unclosed\n", encoding="utf-8")
    proc = subprocess.run([*REFRESH, str(copied)], capture_output=True, text=True)
    assert proc.returncode == 2  # bad input, as everywhere
    assert proc.stderr.startswith(f"error: {copied / '2.33.1.toml'}: not valid TOML")
    assert (copied / PARSED_FILE).read_bytes() == before
    assert sorted(p.name for p in copied.iterdir()) == [*(p.name for p in SHIPPED), PARSED_FILE]


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "schema: unknown schema version None"),
        ('schema = 1\n[release]\nversion = "2.33.1"\n', "release.date: missing required key"),
    ],
    ids=["empty", "not a whole release"],
)
def test_refreshing_refuses_toml_that_is_not_a_release_and_keeps_the_old_parsed_json(
    copied: Path, text: str, says: str
) -> None:
    before = (copied / PARSED_FILE).read_bytes()
    (copied / "2.33.1.toml").write_text(text, encoding="utf-8")
    proc = subprocess.run([*REFRESH, str(copied)], capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stdout == ""
    assert proc.stderr.startswith(f"error: {copied / '2.33.1.toml'}: {says}")
    assert (copied / PARSED_FILE).read_bytes() == before


def test_refreshing_a_directory_without_matrix_files_writes_nothing(tmp_path: Path) -> None:
    empty, missing = tmp_path, tmp_path / "missing"
    for directory, says in (
        (empty, "holds no *.toml matrix files"),
        (missing, "is not a directory"),
    ):
        proc = subprocess.run([*REFRESH, str(directory)], capture_output=True, text=True)
        assert proc.returncode == 2
        assert proc.stderr == f"error: {directory} {says}.\n"
    assert list(tmp_path.iterdir()) == []


def paused_refresh(directory: Path, phase: str, marks: Path) -> tuple[subprocess.Popen[str], Path]:
    """Start the refresh and wait until the test-side shim holds it at ``phase``."""
    env = paused_env(dict(os.environ), phase, marks)
    proc = subprocess.Popen(
        [*REFRESH, str(directory)], env=env, stdout=PIPE, stderr=PIPE, text=True
    )
    return proc, wait_until_paused(proc, phase, marks, timeout=60)


SIGNALS = [signal.SIGINT, signal.SIGTERM]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_an_interrupt_while_reading_leaves_parsed_json_as_it_was(
    copied: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    (copied / PARSED_FILE).write_text('{"planted": 1}\n', encoding="utf-8")
    proc, go = paused_refresh(copied, "parse", tmp_path / "marks")
    proc.send_signal(sig)
    go.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert out == ""
    assert err == (
        "Interrupted. The refresh of parsed.json was stopped. parsed.json is as it was.\n"
    )
    assert (copied / PARSED_FILE).read_text(encoding="utf-8") == '{"planted": 1}\n'
    assert sorted(p.name for p in copied.iterdir()) == [*(p.name for p in SHIPPED), PARSED_FILE]


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
def test_an_interrupt_while_replacing_waits_for_the_replace_and_says_it_happened(
    copied: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    (copied / PARSED_FILE).write_text('{"planted": 1}\n', encoding="utf-8")
    proc, go = paused_refresh(copied, "replace", tmp_path / "marks")
    proc.send_signal(sig)
    go.touch()
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig
    assert out == f"Wrote {copied / PARSED_FILE} (3 matrix files).\n"
    assert err == "Interrupted after the refresh had finished.\n"
    assert (copied / PARSED_FILE).read_text(encoding="utf-8") == render(copied)
    assert sorted(p.name for p in copied.iterdir()) == [*(p.name for p in SHIPPED), PARSED_FILE]


def test_a_kill_before_the_replace_keeps_the_old_parsed_json(copied: Path, tmp_path: Path) -> None:
    (copied / PARSED_FILE).write_text('{"planted": 1}\n', encoding="utf-8")
    proc, _ = paused_refresh(copied, "replace", tmp_path / "marks")
    proc.kill()
    proc.communicate(timeout=60)
    assert (copied / PARSED_FILE).read_text(encoding="utf-8") == '{"planted": 1}\n'


def test_the_refresh_explains_itself() -> None:
    proc = subprocess.run([*REFRESH, "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: python scripts/refresh_parsed.py [DIR]\n\nRefresh")
    assert "``" not in proc.stdout  # plain text, not the docstring's markup
    wrong = subprocess.run([*REFRESH, "a", "b"], capture_output=True, text=True)
    assert (wrong.returncode, wrong.stderr) == (
        2,
        "usage: python scripts/refresh_parsed.py [DIR]\n",
    )
