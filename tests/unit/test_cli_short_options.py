"""`-r` means one thing on every command: --requirement (as in pip and uv), never --release."""

from __future__ import annotations

from typing import Any

import pytest

from neuron_env.cli import COMMANDS, load_command


def commands(command: Any, path: str) -> list[tuple[str, Any]]:
    found = [(path, command)]
    for name, sub in getattr(command, "commands", {}).items():
        found += commands(sub, f"{path} {name}")
    return found


@pytest.mark.parametrize("name", list(COMMANDS))
def test_r_is_never_release(name: str) -> None:
    for path, command in commands(load_command(name), name):
        for param in command.params:
            opts = [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]
            if "-r" in opts:
                assert "--requirement" in opts, f"{path}: -r is {opts}"
