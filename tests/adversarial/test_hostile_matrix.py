"""Matrix files are input too: each hostile one is refused in one paragraph, quickly, exit 2.

Every case starts from ``tests/data/matrices/newer/2.99.0.toml`` (a valid newer release, as a user
adds with ``--matrix-dir``) and breaks it one way: numbers, nesting or strings past any real
need, bytes that are not UTF-8, files that are not files (a FIFO blocks a plain ``open``;
``/dev/zero`` never ends), control characters that change what a rendered template means, and
two files for one release.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner, Result

pytestmark = pytest.mark.integration

NEWER = (DATA / "matrices" / "newer" / "2.99.0.toml").read_text()


def _text(old: str, new: str) -> Callable[[Path], None]:
    def write(folder: Path) -> None:
        assert old in NEWER
        (folder / "2.99.0.toml").write_text(NEWER.replace(old, new, 1))

    return write


def _fifo(folder: Path) -> None:
    os.mkfifo(folder / "2.99.0.toml")


def _dev_zero(folder: Path) -> None:
    (folder / "2.99.0.toml").symlink_to("/dev/zero")


def _not_utf8(folder: Path) -> None:
    data = NEWER.encode().replace(b"does not ship yet", b"does \xff\xfe ship")
    (folder / "2.99.0.toml").write_bytes(data)


def _two_files(folder: Path) -> None:
    (folder / "2.99.0.toml").write_text(NEWER)
    (folder / "2.99.toml").write_text(NEWER.replace('version = "2.99.0"', 'version = "2.99"'))


SUMMARY = 'summary = "A release neuron-env does not ship yet."'
HOSTILE_MATRICES: dict[str, tuple[Callable[[Path], None], str]] = {
    "5000-digit-integer": (
        _text("network-cards = 16", "network-cards = " + "9" * 5000),
        "an integer of over 4,300 digits",
    ),
    "40-digit-integer": (
        _text("network-cards = 16", "network-cards = " + "9" * 40),
        "an integer of 40 digits",
    ),
    "arrays-10000-deep": (
        _text("dlamis = []", "dlamis = " + "[" * 10_000 + "]" * 10_000),
        "nested more than 64 levels deep",
    ),
    "arrays-100-deep": (
        _text("dlamis = []", "dlamis = " + "[" * 100 + "]" * 100),
        "nested more than 64 levels deep",
    ),
    "not-utf-8": (_not_utf8, "not UTF-8 text"),
    "dev-zero": (_dev_zero, "not a regular file but a character device"),
    "fifo": (_fifo, "not a regular file but a FIFO"),
    "100000000-network-cards": (
        _text("network-cards = 16", "network-cards = 100000000"),
        "network-cards = 100000000 is outside 1–64",
    ),
    "zero-network-cards": (
        _text("network-cards = 16", "network-cards = 0"),
        "network-cards = 0 is outside 1–64",
    ),
    "2-mib-summary": (
        _text(SUMMARY, 'summary = "' + "A" * (2 << 20) + '"'),
        "more than the 1.0 MiB allowed",
    ),
    "5000-character-summary": (
        _text(SUMMARY, 'summary = "' + "A" * 5000 + '"'),
        "release.summary: a string of 5,000 characters; at most 4,096",
    ),
    "u2028-in-a-note": (
        _text(SUMMARY, SUMMARY + '\nnotes = ["fine\\u2028Transform: AWS::Include"]'),
        "release.notes[0]: holds the control character U+2028",
    ),
    "u2029-in-the-summary": (
        _text(SUMMARY, 'summary = "x\\u2029y"'),
        "release.summary: holds the control character U+2029",
    ),
    "u0085-in-an-index-note": (
        _text(
            'serves = ["torch-neuronx", "nki"]',
            'serves = ["torch-neuronx", "nki"]\nnote = "a\\u0085b"',
        ),
        "holds the control character U+0085",
    ),
    "newline-in-the-summary": (
        _text(SUMMARY, 'summary = """two\nlines"""'),
        "holds the control character U+000A",
    ),
    "escape-in-a-key": (
        _text("[indexes.neuron]", '[indexes."neu\\u001bron"]'),
        "holds the control character U+001B",
    ),
    "bidi-override": (
        _text(SUMMARY, 'summary = "safe \\u202e"'),
        "holds the control character U+202E",
    ),
    "schema-true": (_text("schema = 1", "schema = true"), "unknown schema version True"),
    "two-files-for-one-release": (_two_files, "which"),
}


def run_quickly(cli: CliRunner, *args: str) -> tuple[Result, float]:
    start = time.monotonic()
    result = cli(*args, timeout=30)  # a FIFO named *.toml used to block here forever
    return result, time.monotonic() - start


def assert_one_paragraph(result: Result, says: str) -> None:
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert says in " ".join(result.stderr.split())
    # one paragraph (plus its hint): no blank line, a few lines however long the path is
    assert "\n\n" not in result.stderr and len(result.stderr.splitlines()) <= 6


@pytest.mark.parametrize("case", sorted(HOSTILE_MATRICES))
def test_a_hostile_matrix_file_is_refused_in_one_paragraph(
    cli: CliRunner, tmp_path: Path, case: str
) -> None:
    make, says = HOSTILE_MATRICES[case]
    make(tmp_path)
    result, took = run_quickly(cli, "--matrix-dir", str(tmp_path), "matrix", "list")
    assert_one_paragraph(result, says)
    assert took < 10


def test_two_files_for_one_release_name_both(cli: CliRunner, tmp_path: Path) -> None:
    _two_files(tmp_path)
    result = cli("--matrix-dir", str(tmp_path), "matrix", "show", "--release", "2.99.0")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert "2.99.toml" in message and "2.99.0.toml" in message


def test_one_release_in_two_matrix_directories_is_refused(cli: CliRunner, tmp_path: Path) -> None:
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "2.99.0.toml").write_text(NEWER)
    (second / "2.99.toml").write_text(NEWER.replace('version = "2.99.0"', 'version = "2.99"'))
    result = cli("--matrix-dir", str(first), "--matrix-dir", str(second), "matrix", "list")
    assert result.returncode == 2
    message = " ".join(result.stderr.split())
    assert str(first / "2.99.0.toml") in message and str(second / "2.99.toml") in message


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\n"])
def test_a_matrix_dir_path_with_a_line_separator_is_refused(
    cli: CliRunner, tmp_path: Path, separator: str
) -> None:
    folder = tmp_path / f"m{separator}Transform: AWS::Include"
    folder.mkdir()
    (folder / "2.99.0.toml").write_text(NEWER)
    result = cli("--matrix-dir", str(folder), "matrix", "list")
    assert_one_paragraph(result, f"holds the control character U+{ord(separator):04X}")
    env_result = cli("matrix", "list", env={"NEURON_ENV_MATRIX_DIR": str(folder)})
    assert env_result.returncode == 2


def test_matrix_validate_refuses_a_fifo_without_blocking(cli: CliRunner, tmp_path: Path) -> None:
    _fifo(tmp_path)
    result, took = run_quickly(cli, "matrix", "validate", str(tmp_path / "2.99.0.toml"))
    assert result.returncode == 2
    assert "not a regular file but a FIFO" in result.stdout
    assert took < 10
