"""The product reads no environment variable meant for its tests: a user's environment cannot
make ``neuron-env`` wait, write marker files or behave in any other test-only way."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import neuron_env

PACKAGE = Path(neuron_env.__file__).parent
# An environment variable's name, as the package would spell it in its source.
VARIABLE = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")
TEST_WORDS = ("TEST", "PAUSE")


def variable_names(source: str) -> set[str]:
    """Every string literal in ``source`` shaped like an environment variable's name."""
    return {
        node.value
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and VARIABLE.fullmatch(node.value)
    }


def test_no_environment_variable_named_for_tests_or_pauses_is_read() -> None:
    found = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name in variable_names(path.read_text(encoding="utf-8"))
        if any(word in name for word in TEST_WORDS)
    }
    assert found == set()


def test_the_check_finds_such_a_name() -> None:
    source = 'import os\nPAUSE_AT = "NEURON_ENV_TEST_PAUSE_AT"\nos.environ.get(PAUSE_AT)\n'
    assert variable_names(source) == {"NEURON_ENV_TEST_PAUSE_AT"}
