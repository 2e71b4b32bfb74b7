"""Help texts whose examples are pasted: click rewraps every paragraph at the terminal's width,
which broke an example command across lines (``--region us-`` / ``east-2``) at 80 columns.

:func:`keep_examples_whole` marks each example paragraph with click's ``\\b`` (no rewrap), and
joins an ``Example: neuron-env ...`` written inline into one line; a long example then runs past
the edge of a narrow terminal instead of being cut.
"""

from __future__ import annotations

import re
from typing import Any

NO_REWRAP = "\b"
_INLINE = re.compile(r"(Examples?:)\s+(neuron-env\s.*)", re.DOTALL)
_COMMANDS = ("neuron-env ", "srun ", "cd ", "docker ")


def keep_examples_whole(text: str | None) -> str | None:
    """``text`` with every example paragraph kept as written (see the module's docstring)."""
    if not text:
        return text
    paragraphs: list[str] = []
    for paragraph in text.split("\n\n"):
        paragraphs.extend(_kept(paragraph))
    return "\n\n".join(paragraphs)


def _kept(paragraph: str) -> list[str]:
    stripped = paragraph.strip()
    if stripped.startswith(NO_REWRAP):
        return [paragraph]
    inline = _INLINE.fullmatch(stripped)
    if inline:  # the docstring's own line breaks are not the command's
        return [f"{NO_REWRAP}\n{inline.group(1)} " + " ".join(inline.group(2).split())]
    if stripped.startswith(_COMMANDS):
        return [f"{NO_REWRAP}\n{paragraph}"]
    return [paragraph]


def protect_examples(command: Any) -> Any:
    """``command`` (a click command or group, with its subcommands) with its examples whole."""
    command.help = keep_examples_whole(command.help)
    for sub in getattr(command, "commands", {}).values():
        protect_examples(sub)
    return command
