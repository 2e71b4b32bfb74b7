"""The project's own files pass the tools their users run on them, run plainly.

Rendered documents are checked where they are rendered (test_cloud_render, test_image_render,
test_preflight, test_report_formats, test_scan_cli); this module covers the files the repository
ships as they are: its shell scripts (shellcheck 0.11), the Kubernetes examples
(kubernetes-validate --strict), the CI examples and the GitHub Action (check-jsonschema with the
schemas it ships for them). Each tool runs once over all its files.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.support.cli import REPO
from tests.support.validators import (
    CHECK_JSONSCHEMA,
    KUBERNETES_VALIDATE,
    SHELLCHECK,
    SHELLCHECK_VERSION,
    assert_shellcheck_clean,
)

pytestmark = pytest.mark.integration

# Inputs to 'neuron-env scan' (XLA-era scripts, deliberately odd), not scripts of ours.
NOT_OURS = ("tests/data/scan/corpus/",)


def tracked_shell_scripts() -> list[str]:
    """Every tracked file that starts with a sh/bash shebang, outside ``NOT_OURS``."""
    files = subprocess.run(
        ["git", "ls-files"], cwd=REPO, capture_output=True, text=True, check=True
    ).stdout.split()
    # Templates (.j2) are checked as rendered, in the tests of the commands that render them.
    ours = [f for f in files if not f.startswith(NOT_OURS) and not f.endswith(".j2")]
    return [f for f in ours if has_shell_shebang(f)]


def has_shell_shebang(name: str) -> bool:
    path = REPO / name
    if not path.is_file():
        return False
    with path.open("rb") as handle:
        first = handle.readline(200)
    return first.startswith(b"#!") and first.split(b"/")[-1].split()[-1] in (b"sh", b"bash")


def test_the_tests_use_shellcheck_0_11_from_the_test_extra() -> None:
    version = subprocess.run(
        [str(SHELLCHECK), "--version"], capture_output=True, text=True, check=True
    ).stdout
    assert f"version: {SHELLCHECK_VERSION}" in version


def test_every_shell_script_in_the_repository_passes_shellcheck() -> None:
    scripts = tracked_shell_scripts()
    assert "scripts/bootstrap.sh" in scripts and "scripts/test.sh" in scripts
    assert_shellcheck_clean(*(REPO / s for s in scripts))


def test_the_kubernetes_examples_pass_kubernetes_validate_strict() -> None:
    manifests = sorted(str(p) for p in (REPO / "examples" / "kubernetes").glob("*.yaml"))
    result = subprocess.run(
        [str(KUBERNETES_VALIDATE), "--strict", *manifests], capture_output=True, text=True,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count(" passed for resource ") >= len(manifests)


@pytest.mark.parametrize(
    ("schema", "path"),
    [
        ("vendor.github-workflows", "examples/github-workflow.yml"),
        ("vendor.gitlab-ci", "examples/gitlab-ci.yml"),
        ("vendor.github-actions", "action.yml"),
    ],
)
def test_ci_files_pass_check_jsonschema(schema: str, path: str) -> None:
    result = subprocess.run(
        [str(CHECK_JSONSCHEMA), "--builtin-schema", schema, str(REPO / path)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
