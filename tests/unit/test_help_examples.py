"""Every ``--help`` example is one whole line at 80 columns: click rewraps paragraphs, which cut
examples mid-command (``--region us-`` / ``east-2``) where a user copies them from."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from typer.testing import CliRunner

from neuron_env.cli import COMMANDS, app, load_command
from neuron_env.cli.help_text import keep_examples_whole

WIDTH = 80


def commands() -> Iterator[tuple[list[str], Any]]:
    """``(path, command)`` for every command and subcommand."""

    def walk(path: list[str], command: Any) -> Iterator[tuple[list[str], Any]]:
        yield path, command
        for name, sub in getattr(command, "commands", {}).items():
            yield from walk([*path, name], sub)

    for name in COMMANDS:
        yield from walk([name], load_command(name))


def examples(help_text: str) -> list[str]:
    """The example lines of a help text: its paragraphs kept whole (click's ``\\b``)."""
    kept = [p for p in help_text.split("\n\n") if p.strip().startswith("\b")]
    lines = [line.strip() for p in kept for line in p.strip().splitlines()[1:]]
    lines = [line.removeprefix("Example: ").removeprefix("Examples: ") for line in lines]
    return [line for line in lines if line]


ALL = [(path, command) for path, command in commands()]


@pytest.mark.parametrize(("path", "command"), ALL, ids=[" ".join(p) for p, _ in ALL])
def test_every_help_example_is_a_whole_line_at_80_columns(path: list[str], command: Any) -> None:
    # What the docstring shows as examples (idempotent on a help already kept whole)
    shown = examples(keep_examples_whole(command.help) or "")
    if "Example" in (command.help or ""):
        assert shown, f"{' '.join(path)}: its examples are not kept whole"
    result = CliRunner().invoke(app, [*path, "--help"], terminal_width=WIDTH)
    assert result.exit_code == 0, result.output
    lines = {line.strip().removeprefix("Example: ") for line in result.output.splitlines()}
    for example in shown:
        assert example in lines, f"{' '.join(path)}: {example!r} is broken across lines"


def test_the_top_level_examples_are_whole_too() -> None:
    result = CliRunner().invoke(app, ["--help"], terminal_width=WIDTH)
    assert "  neuron-env matrix resolve --torch 2.14 --python-version 3.12\n" in (result.output)


def test_an_inline_example_is_joined_into_one_line_and_prose_still_wraps() -> None:
    text = "Say what.\n\nExample: neuron-env smoke --python\n/opt/venv/bin/python"
    assert keep_examples_whole(text) == (
        "Say what.\n\n\b\nExample: neuron-env smoke --python /opt/venv/bin/python"
    )
