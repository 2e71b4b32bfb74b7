"""Dockerfiles and YAML files (Kubernetes, Compose, CI), read as the shell lines they hold.

Each file becomes text with the same lines and columns in which only what a shell would see is
left, so the shell rules (:mod:`.shell`) find XLA variables and XLA-era commands there too:

* Dockerfile: ``ENV A=1 B=2`` and ``ENV A 1`` set variables; ``RUN``, and the shell forms of
  ``CMD`` and ``ENTRYPOINT``, run commands (continuation lines included); other instructions
  and the exec form (``CMD ["torchrun", ...]``) are left out.
* YAML: ``- name: VAR`` (a Kubernetes ``env:`` list), ``VAR: value`` (an ``env:`` or
  ``environment:`` mapping) and ``- VAR=value`` (a Compose list) set variables; the values of
  ``run:``, ``command:``, ``script:`` and block scalars are shell lines.

Not a Dockerfile or YAML parser: a line-by-line reading that keeps positions exact.
"""

from __future__ import annotations

import re

DOCKERFILE_NAMES = ("Dockerfile", "Containerfile")
_INSTRUCTION = re.compile(r"^(?P<indent>\s*)(?P<word>[A-Za-z]+)(?P<space>\s+)")
_SHELL_INSTRUCTIONS = frozenset({"RUN", "CMD", "ENTRYPOINT"})
_ENV_SPACE_FORM = re.compile(r"^(?P<name>[A-Za-z_]\w*)\s+(?!=)")
_YAML_ENV_NAME = re.compile(
    r"^(?P<lead>\s*-?\s*name:\s*)(?P<q>['\"]?)(?P<name>[A-Za-z_]\w*)(?P=q)\s*$"
)
_YAML_COMMENT = re.compile(r"\s+#.*$")
_YAML_KEY = re.compile(r"^(?P<lead>\s*)(?P<name>[A-Za-z_]\w*):(?=\s|$)")
_YAML_LIST_ITEM = re.compile(r"^(?P<lead>\s*-\s+)(?=[A-Za-z_]\w*=)")
_YAML_SHELL_KEY = re.compile(
    r"^(?P<lead>\s*(?:-\s+)?(?:run|command|script|entrypoint|cmd|args):\s*)(?P<rest>.*)$"
)


def is_dockerfile(name: str) -> bool:
    """``Dockerfile``, ``Dockerfile.train``, ``train.Dockerfile``, ``Containerfile``."""
    return any(
        name == base or name.startswith(base + ".") or name.endswith("." + base)
        for base in DOCKERFILE_NAMES
    )


def dockerfile_as_shell(text: str) -> str:
    """The Dockerfile's shell text, line for line."""
    out, current = [], ""  # current: the instruction a continuation line belongs to
    for line in text.split("\n"):
        match = _INSTRUCTION.match(line)
        body = line
        if not current and line.lstrip().startswith("#"):
            out.append("")
            continue
        if not current and match:
            current = match.group("word").upper()
            body = " " * match.end() + line[match.end() :]
        shown = current in _SHELL_INSTRUCTIONS and not body.lstrip().startswith("[")
        if current == "ENV":
            out.append(_env_line(body))
        else:
            out.append(body if shown else "")
        current = current if line.rstrip().endswith("\\") else ""
    return "\n".join(out)


def _env_line(body: str) -> str:
    """``ENV A 1`` (the old form, one variable) reads as ``A=1``; ``ENV A=1 B=2`` as it is."""
    stripped = body.lstrip()
    match = _ENV_SPACE_FORM.match(stripped)
    if match and "=" not in stripped.split()[0]:
        start = len(body) - len(stripped)
        end = start + match.end("name")
        return body[:end] + "=" + body[end + 1 :]
    return body


def yaml_as_shell(text: str) -> str:
    """The YAML file's variables and shell lines, line for line."""
    out, block = [], -1  # block: indentation of the block scalar being read, or -1
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        if block >= 0 and (not line.strip() or indent > block):
            out.append(line)
            continue
        block = -1
        out.append(_yaml_line(line))
        shell = _YAML_SHELL_KEY.match(line)
        if shell and re.fullmatch(r"[|>][-+]?\s*", shell.group("rest")):
            block = indent  # `run: |`: the lines below are a script (prose blocks are not)
    return "\n".join(out)


def _yaml_line(line: str) -> str:
    code = _YAML_COMMENT.sub("", line)
    for pattern in (_YAML_ENV_NAME, _YAML_LIST_ITEM):
        match = pattern.match(code)
        if match:
            lead = " " * len(match.group("lead"))
            if pattern is _YAML_ENV_NAME:  # `- name: VAR` → `VAR=`, at VAR's column
                return lead + " " * len(match.group("q")) + match.group("name") + "="
            return lead + line[match.end("lead") :]
    shell = _YAML_SHELL_KEY.match(line)
    if shell:
        return " " * len(shell.group("lead")) + shell.group("rest")
    key = _YAML_KEY.match(line)
    if key:  # `VAR: value` under env: → `VAR=value`
        return line[: key.end("name")] + "=" + line[key.end("name") + 1 :]
    return ""
