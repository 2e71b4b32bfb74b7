"""A Dockerfile parser, enough for what ``image render`` writes: instructions with their
continuation lines joined, and each RUN as its commands, every command a list of shell words."""

from __future__ import annotations

import shlex
from dataclasses import dataclass


@dataclass(frozen=True)
class Instruction:
    keyword: str
    args: str


def parse_dockerfile(text: str) -> list[Instruction]:
    """Instructions with their continuation lines joined; comments and blank lines dropped."""
    instructions, pending = [], ""
    for line in text.splitlines():
        stripped = line.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if stripped.startswith("#"):  # a comment inside a continued instruction
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        keyword, _, args = (pending + stripped).partition(" ")
        instructions.append(Instruction(keyword.upper(), args.strip()))
        pending = ""
    assert not pending, "a continuation at the end of the file"
    return instructions


def run_commands(instructions: list[Instruction]) -> list[list[str]]:
    """Each RUN as its commands (split at && and |), every command a list of shell words."""
    commands: list[list[str]] = []
    for ins in instructions:
        if ins.keyword != "RUN":
            continue
        for part in ins.args.split(" && "):
            commands.extend(shlex.split(stage) for stage in part.split(" | "))
    return commands


def labels(instructions: list[Instruction]) -> dict[str, str]:
    out = {}
    for ins in instructions:
        if ins.keyword == "LABEL":
            (pair,) = shlex.split(ins.args.replace("\\$", "$"), posix=True)
            key, _, value = pair.partition("=")
            out[key] = value
    return out


def command(commands: list[list[str]], *prefix: str) -> list[str]:
    (found,) = [c for c in commands if c[: len(prefix)] == list(prefix)]
    return found
