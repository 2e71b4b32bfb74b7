"""What the workers import in the target interpreter, as an allow-list.

The workers run in the user's interpreter, where neuron-env and its dependencies need not be
importable: ``neuron_env/worker/target/__main__.py`` loads them under a private root whose parent
packages are empty shells. So a target-side module may import only the standard library, torch,
and (relatively) the other target-side modules. The import-linter contracts in pyproject.toml
list what is forbidden; a new neuron-env module is not on those lists, and importing it from a
worker passed lint-imports and then failed every device test at run time (the fifth session's
``neuron_env.frozen``). This test reads each target-side file's imports and names any other.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "neuron_env"
TARGET_SIDE = ("worker/target", "selftest/worker", "evaluate/worker", "collectives/worker")
THIRD_PARTY = {"torch"}
FILES = sorted(f for folder in TARGET_SIDE for f in (PACKAGE / folder).rglob("*.py"))


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement that runs (those under ``if TYPE_CHECKING:`` never do)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            yield from (n for child in node.orelse for n in _runtime_imports_in(child))
            continue
        yield from _runtime_imports_in(node)


def _runtime_imports_in(node: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    if isinstance(node, ast.Import | ast.ImportFrom):
        yield node
    else:
        yield from _runtime_imports(node)


def _target_side(path: Path, package: Path) -> bool:
    folders = [package / folder for folder in TARGET_SIDE]
    return any(path == folder or folder in path.parents for folder in folders)


def _problems(file: Path, package: Path = PACKAGE) -> Iterator[str]:
    for node in _runtime_imports(ast.parse(file.read_text(encoding="utf-8"))):
        where = f"{file.relative_to(package.parent)}:{node.lineno}"
        if isinstance(node, ast.ImportFrom) and node.level:
            base = file.parent
            for _ in range(node.level - 1):
                base = base.parent
            named = [node.module] if node.module else [a.name for a in node.names]
            for name in named:
                path = base.joinpath(*name.split("."))
                if not _target_side(path, package):
                    yield f"{where}: imports {path.relative_to(package.parent)}, not target-side"
            continue
        modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        modules += [a.name for a in node.names] if isinstance(node, ast.Import) else []
        for module in modules:
            top = module.split(".")[0]
            if top not in sys.stdlib_module_names and top not in THIRD_PARTY:
                yield f"{where}: imports {module}, which the target need not have"


def test_the_target_side_files_are_found() -> None:
    assert len(FILES) > 20
    assert PACKAGE / "worker" / "target" / "__main__.py" in FILES


@pytest.mark.parametrize("file", FILES, ids=lambda f: str(f.relative_to(PACKAGE)))
def test_a_target_side_module_imports_only_the_stdlib_torch_and_its_own(file: Path) -> None:
    assert list(_problems(file)) == []


def test_the_check_names_what_the_fifth_session_broke(tmp_path: Path) -> None:
    """The check itself: an absolute neuron-env import and a relative one that climbs out of the
    target side are both named."""
    folder = tmp_path / "neuron_env" / "selftest" / "worker"
    folder.mkdir(parents=True)
    planted = folder / "planted.py"
    planted.write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "import json\n"
        "from neuron_env.frozen import frozen\n"
        "from ..models import SuiteResult\n"
        "from ...worker.target import protocol\n"
        "if TYPE_CHECKING:\n"
        "    from neuron_env.facts import HostFacts\n",
        encoding="utf-8",
    )
    assert list(_problems(planted, tmp_path / "neuron_env")) == [
        "neuron_env/selftest/worker/planted.py:4: imports neuron_env.frozen, which the target "
        "need not have",
        "neuron_env/selftest/worker/planted.py:5: imports neuron_env/selftest/models, not "
        "target-side",
    ]
