"""Shell scripts (``*.sh``, ``*.bash``, ``*.sbatch``, or a ``sh``/``bash`` shebang): XLA variables
they set and XLA-era commands they run.

Not a shell parser: each line is read with its quotes and comments masked, so a variable counts
where it is assigned or exported (``export XLA_USE_BF16=1``, ``PJRT_DEVICE=NEURON python ...``)
and a command where a shell would run it (start of a command, after ``;``/``&&``/``|``/``$(``, a
``VAR=value`` prefix or ``sudo``/``env``/``time``), never inside ``echo "..."`` or a comment.
Here-document bodies are data and are skipped. Slurm's ``--export=ALL,VAR=value`` lists count as
assignments, on ``sbatch``/``srun`` lines and in ``#SBATCH`` directives, and a ``torchrun`` line's
``--nproc_per_node`` is checked by rules with ``check = "launch-size"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from neuron_env.frozen import frozen
from neuron_env.scan.detect import command_pattern, finding
from neuron_env.scan.model import Finding, Rule, RuleSet, Span
from neuron_env.scan.source import SourceFile

SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh"})
_ASSIGNMENT = re.compile(
    r"(?:^|[\s;&|(])(?:export\s+|declare\s+-x\s+|readonly\s+|env\s+)?(?P<name>[A-Za-z_]\w*)(?==)"
)
_EXPORT = re.compile(r"(?:^|[\s;&|(])export\s+(?P<names>[A-Za-z_]\w*(?:\s+[A-Za-z_]\w*)*)\s*$")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(?P<word>\w+)\1")
_SBATCH = re.compile(r"^\s*#SBATCH\b")
_SLURM_EXPORT = re.compile(r"(?:^|\s)--export(?:=|\s+)(?P<list>\S+)")
_EXPORTED = re.compile(r"(?:^|,)(?P<name>[A-Za-z_]\w*)")
_LAUNCHER = re.compile(
    r"(?:^|[\s;&|(/\[\"'])"
    r"(?:torchrun|python3?\s+-m\s+torch\.distributed\.(?:run|launch))(?=[\s\"',]|$)"
)
_NPROC = re.compile(
    r"--nproc[_-]per[_-]node(?:=|\s+)(?P<value>(?P<count>\d+)\b|\$\{?(?P<var>[A-Za-z_]\w*)\}?)"
)
_NUMBER = re.compile(r"(?:^|[\s;&|(])(?:export\s+)?(?P<name>[A-Za-z_]\w*)=(?P<value>\d+)(?=\s|;|$)")
_READ = re.compile(r"\$\{?(?P<name>[A-Za-z_]\w*)")
_ARGS_VARIABLE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_]\w*=")  # DISTRIBUTED_ARGS="--nproc..."
_MESSAGE = re.compile(r"^\s*(?:echo|printf|logger)\b")


def is_shell_shebang(first_line: bytes) -> bool:
    """``#!/bin/bash``, ``#!/usr/bin/env sh``, ``#!/bin/bash -eu``..."""
    if not first_line.startswith(b"#!"):
        return False
    words = first_line[2:].decode("utf-8", "replace").split()
    if not words:
        return False
    program = words[0].rsplit("/", 1)[-1]
    if program == "env":
        program = next((w for w in words[1:] if not w.startswith("-")), "")
    return program in SHELLS


@frozen
class _Script:
    """What a line's findings may depend on elsewhere in the script."""

    launches: bool  # torchrun runs somewhere in it
    numbers: dict[str, str]  # NAME=32 assignments: what `--nproc_per_node $NAME` means


def shell_findings(source: SourceFile, rules: RuleSet) -> list[Finding]:
    """The findings of a shell script (or of the shell lines of a notebook cell)."""
    lines = [(number, _directive(line)) for number, line in _code_lines(source)]
    masked_lines = [(number, line, mask(line)) for number, line in lines]
    script = _Script(
        launches=any(
            _LAUNCHER.search(line[: len(masked.rstrip())]) and not _MESSAGE.match(masked)
            for _, line, masked in masked_lines
        ),
        numbers={
            m.group("name"): m.group("value")
            for _, _, masked in masked_lines
            for m in _NUMBER.finditer(masked)
        },
    )
    found: list[Finding] = []
    for number, line, masked in masked_lines:
        for rule in rules.rules:
            found.extend(_line_findings(rule, source, number, masked, line))
            if rule.detect.check == "launch-size" and script.launches:
                found.extend(_launch_size(rule, source, number, masked, line, script))
    return found


def _directive(line: str) -> str:
    """A Slurm directive is not a comment: ``#SBATCH --export=...`` is read as its options."""
    return line.replace("#SBATCH", " " * len("#SBATCH"), 1) if _SBATCH.match(line) else line


def _code_lines(source: SourceFile) -> Iterator[tuple[int, str]]:
    heredoc = ""
    for number, line in enumerate(source.lines, start=1):
        text = line.rstrip("\r\n")
        if heredoc:
            heredoc = "" if text.strip() == heredoc else heredoc
            continue
        yield number, text
        masked = mask(text)
        for opened in _HEREDOC.finditer(text):
            if masked[opened.start()] == "<":  # not inside quotes or a comment
                heredoc = opened.group("word")


def mask(line: str) -> str:
    """``line`` with quoted text and the comment replaced by spaces (same length)."""
    out, quote, escaped = [], "", False
    for index, char in enumerate(line):
        if escaped:
            out.append(" ")
            escaped = False
        elif quote:
            escaped = char == "\\" and quote == '"'
            quote = "" if char == quote else quote
            out.append(char if not quote else " ")
        elif char == "\\":
            escaped = True
            out.append(char)
        elif char in "'\"":
            quote = char
            out.append(char)
        elif char == "#" and (index == 0 or line[index - 1] in " \t;&|("):
            out.append(" " * (len(line) - index))
            break
        else:
            out.append(char)
    return "".join(out)


def _line_findings(
    rule: Rule, source: SourceFile, number: int, masked: str, line: str
) -> Iterator[Finding]:
    detect = rule.detect
    assigned = set()
    if detect.literals or detect.literal_prefixes:
        for name, start in _variables(masked, line):
            if name in detect.literals or name.startswith(detect.literal_prefixes or ("\0",)):
                assigned.add(name)
                yield _at(rule, source, number, start, name)
    if detect.commands:
        for match in re.finditer(command_pattern(detect.commands, in_string=False), masked):
            yield _at(rule, source, number, match.start("name"), match.group("name"))
    if detect.literals:
        for read in _READ.finditer(masked):  # `[ $NEURON_EXTRACT_GRAPHS_ONLY -gt 0 ]`
            if read.group("name") in detect.literals and read.group("name") not in assigned:
                yield _at(rule, source, number, read.start("name"), read.group("name"))


def _launch_size(
    rule: Rule, source: SourceFile, number: int, masked: str, line: str, script: _Script
) -> Iterator[Finding]:
    """``torchrun --nproc_per_node 32``, also ``ARGS="--nproc_per_node $CORES"`` with
    ``CORES=32`` set in a script that runs torchrun (never in echo/printf)."""
    code = line[: len(masked.rstrip())] if masked.strip() else ""  # the comment cut off
    if _MESSAGE.match(masked) or not (_LAUNCHER.search(code) or _ARGS_VARIABLE.match(masked)):
        return  # a message, or another program's option of the same name
    for match in _NPROC.finditer(code):
        value = match.group("count") or script.numbers.get(match.group("var"), "")
        if value in rule.detect.values:
            yield _at(rule, source, number, match.start("value"), value)


def _variables(masked: str, line: str) -> Iterator[tuple[str, int]]:
    for match in _ASSIGNMENT.finditer(masked):
        yield match.group("name"), match.start("name")
    for slurm in _SLURM_EXPORT.finditer(masked):
        # The list as written: quotes (masked above) hold it together, they do not hide it.
        start = slurm.start("list")
        if line[start] in "'\"":
            end = line.find(line[start], start + 1)
            start, listed = start + 1, line[start + 1 : end if end > 0 else len(line)]
        else:
            listed = slurm.group("list")
        for name in _EXPORTED.finditer(listed):
            if name.group("name") not in ("ALL", "NONE", "NIL"):
                yield name.group("name"), start + name.start("name")
    export = _EXPORT.search(masked)
    if export:
        offset = export.start("names")
        for word in re.finditer(r"\S+", export.group("names")):
            yield word.group(0), offset + word.start()


def _at(rule: Rule, source: SourceFile, line: int, start: int, name: str) -> Finding:
    span = Span(line, start + 1, line, start + 1 + len(name))
    return finding(rule, source, span, name)
