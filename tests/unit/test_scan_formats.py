"""Notebooks and shell scripts: what is read as code, and where findings are placed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neuron_env.matrix import load_matrix
from neuron_env.scan import Finding, rules_for, scan_file
from neuron_env.scan.shell import is_shell_shebang, mask

RULES = rules_for(load_matrix().get("2.34.0"))


def notebook(tmp_path: Path, *cells: str, language: str = "python") -> list[Finding]:
    document = {
        "cells": [{"cell_type": "code", "source": source, "metadata": {}} for source in cells],
        "metadata": {"kernelspec": {"language": language, "name": "k"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(document))
    return scan_file(path, "nb.ipynb", RULES)


def places(findings: list[Finding]) -> list[tuple[int | None, int, str]]:
    return sorted((f.cell, f.span.line, f.rule.id) for f in findings)


def test_a_cell_that_does_not_parse_is_an_error_there_and_the_others_are_scanned(
    tmp_path: Path,
) -> None:
    found = notebook(tmp_path, "import torch_xla\n", "def broken(:\n", "torch_xla.sync()\n")
    assert places(found) == [(1, 1, "xla-import"), (2, 1, "scan-error"), (3, 1, "xla-mark-step")]


def test_a_future_import_in_a_later_cell_falls_back_to_cell_by_cell(tmp_path: Path) -> None:
    found = notebook(
        tmp_path, "import os\n", "from __future__ import annotations\nimport torch_xla\n"
    )
    assert places(found) == [(2, 2, "xla-import")]


def test_a_notebook_in_another_language_is_refused_with_the_reason(tmp_path: Path) -> None:
    (found,) = notebook(tmp_path, "library(torch)\n", language="R")
    assert found.rule.id == "scan-error"
    assert found.message == "a notebook in R: only Python notebooks are scanned"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (b"#!/bin/bash", True),
        (b"#!/usr/bin/env bash", True),
        (b"#!/bin/sh -eu", True),
        (b"#!/usr/bin/env -S bash -e", True),
        (b"#!/usr/bin/env python3", False),
        (b"# not a shebang", False),
    ],
)
def test_shell_shebangs(line: bytes, expected: bool) -> None:
    assert is_shell_shebang(line) is expected


def test_mask_blanks_quotes_and_comments_but_keeps_columns() -> None:
    line = "echo \"neuron_parallel_compile\" 'x' # neuron_parallel_compile"
    masked = mask(line)
    assert len(masked) == len(line)
    assert "neuron_parallel_compile" not in masked
    assert masked.startswith("echo ")


def test_shell_findings_are_at_the_exact_column(tmp_path: Path) -> None:
    path = tmp_path / "run.sh"
    path.write_text("set -e\n  export XLA_FLAGS='--xla_dump_to=/tmp'\n")
    (found,) = scan_file(path, "run.sh", RULES)
    assert (found.rule.id, found.span.line, found.span.column, found.span.end_column) == (
        "xla-env",
        2,
        10,
        19,
    )
