"""Every option is declared once, and every metavar is written in one style.

A flag that two command modules declare drifts apart (help, metavar, checks): shared options live
in ``neuron_env/cli/options.py``. A metavar is a placeholder in capitals (``PATH``, ``X.Y``,
``SECONDS``) or a literal value as it is typed (``0|1|2``, ``dlami|ubuntu``) — never click's
``<str>`` or ``<path>``.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from neuron_env.cli import COMMANDS, load_command
from tests.support.cli import commands

PACKAGE = Path(__file__).resolve().parents[2] / "neuron_env"
# The shared flags and helpers in cli/, and each command's own module, <package>/cli.py.
CLI_MODULES = sorted([*PACKAGE.glob("cli/*.py"), *PACKAGE.glob("*/cli.py")])

# One alternative of a metavar: an optional literal prefix (``tag:``, ``s3://``), then a
# placeholder in capitals; or a literal value as it is typed (lowercase, digits, hyphens).
_PLACEHOLDER = r"(?:[a-z0-9]+:(?://)?)?[A-Z0-9][A-Z0-9.=/%_-]*"
_LITERAL = r"[a-z0-9][a-z0-9_-]*"
STYLE = re.compile(rf"(?:{_PLACEHOLDER}|{_LITERAL})(?:\|(?:{_PLACEHOLDER}|{_LITERAL}))*")


def declared_flags(module: Path) -> set[str]:
    """The long flags of every ``typer.Option(...)`` call written in ``module``."""
    flags: set[str] = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        func = node.func if isinstance(node, ast.Call) else None
        if (
            isinstance(func, ast.Attribute)
            and func.attr == "Option"
            and isinstance(func.value, ast.Name)
            and func.value.id == "typer"
        ):
            assert isinstance(node, ast.Call)
            flags.update(
                arg.value
                for arg in node.args
                if isinstance(arg, ast.Constant)
                and isinstance(arg.value, str)
                and arg.value.startswith("--")
            )
    return flags


def test_no_option_flag_is_declared_in_two_cli_modules() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    assert len(CLI_MODULES) > 10  # the scan sees every command's module
    for module in CLI_MODULES:
        for flag in declared_flags(module):
            where[flag].append(module.relative_to(PACKAGE).as_posix())
    assert where["--python"] == ["cli/options.py"]  # the scan sees the declarations
    twice = {flag: modules for flag, modules in where.items() if len(modules) > 1}
    assert twice == {}, "declare these once, in neuron_env/cli/options.py"


def value_options() -> list[tuple[str, Any]]:
    """(command path, option) of every option of every command that takes a value."""
    found = []
    for name in COMMANDS:
        for path, command in commands(load_command(name), name):
            for param in command.params:
                # typer builds its own click's classes: asked by what they are, not by class
                if param.param_type_name == "option" and not param.is_flag:
                    found.append((f"{path} {param.opts[0]}", param))
    return found


OPTIONS = value_options()


def test_the_options_of_every_command_are_seen() -> None:
    assert len(OPTIONS) > 100 and "doctor --python" in dict(OPTIONS)


@pytest.mark.parametrize(("where", "option"), OPTIONS, ids=[where for where, _ in OPTIONS])
def test_every_metavar_follows_the_one_style(where: str, option: Any) -> None:
    assert option.metavar is not None, f"{where}: give it a metavar (not click's <type>)"
    assert STYLE.fullmatch(option.metavar), f"{where}: metavar {option.metavar!r}"


def test_the_style_refuses_what_click_writes_by_default() -> None:
    for metavar in ("<str>", "<path>", "TEXT PATH", "Path", "R|<int>"):
        assert not STYLE.fullmatch(metavar), metavar
    for metavar in ("PATH", "X.Y", "0|1|2", "tag:KEY=VALUE", "URL|s3://B/K|ami|pypi", "N|N%"):
        assert STYLE.fullmatch(metavar), metavar


# Commands that take the same block of options (cli/_common.option_group): one declaration, so
# --help lists the block alike in each, in the same order, with the same help and defaults.
SHARED_BLOCKS = [
    ("launch-template", "render", "create", "--instance-type", "--neuron-env-spec"),
    ("fleet", "collect", "doctor", "--output", "--refresh"),
]


@pytest.mark.parametrize(("group", "one", "other", "first", "last"), SHARED_BLOCKS)
def test_commands_sharing_a_block_of_options_list_it_alike(
    group: str, one: str, other: str, first: str, last: str
) -> None:
    def block(name: str) -> list[tuple[Any, ...]]:
        command = load_command(group).commands[name]
        listed = [
            (tuple(p.opts), p.metavar, getattr(p, "help", None), p.default, p.required)
            for p in command.params
        ]
        flags = [opts[0] for opts, *_ in listed]
        return listed[flags.index(first) : flags.index(last) + 1]

    shared = block(one)
    assert len(shared) > 5
    assert shared == block(other)
