"""`-r` means one thing on every command: --requirement (as in pip and uv), never --release."""

from __future__ import annotations

import pytest

from neuron_env.cli import COMMANDS, load_command
from tests.support.cli import commands


@pytest.mark.parametrize("name", list(COMMANDS))
def test_r_is_never_release(name: str) -> None:
    for path, command in commands(load_command(name), name):
        for param in command.params:
            opts = [*getattr(param, "opts", []), *getattr(param, "secondary_opts", [])]
            if "-r" in opts:
                assert "--requirement" in opts, f"{path}: -r is {opts}"
