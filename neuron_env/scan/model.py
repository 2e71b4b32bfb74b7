"""What ``neuron-env scan`` reports: rules, findings with exact positions, and the whole report.

Plain frozen data: the rule registry builds :class:`Rule`, the detectors build :class:`Finding`,
the renderers only lay them out.
"""

from __future__ import annotations

import functools
from dataclasses import field
from pathlib import Path
from typing import Literal

from neuron_env.frozen import frozen

Severity = Literal["error", "warning", "note"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "note")  # most severe first
EventKind = Literal["import", "reference"]
CheckName = Literal[
    "compile-dynamic", "compile-mode", "compile-backend", "argument", "saved-result", "launch-size"
]
FixKind = Literal[
    "neuron-device-call",  # xm.xla_device() → torch.device("neuron")
    "neuron-device-string",  # "xla:1" → "neuron:1"
    "neuron-string",  # "xla" / "openxla" → "neuron"
    "env-init",  # "xla://" / "pjrt://" → "env://"
    "remove-statement",  # xm.mark_step() → nothing (or pass)
    "get-rank",  # xm.get_ordinal() → torch.distributed's rank
    "get-world-size",  # xr.world_size() → torch.distributed's world size
    "rank-0-print",  # xm.master_print(x) → print(x) on rank 0
    "rank-0-save",  # xm.save(obj, path) → torch.save(obj, path) on rank 0
]


def rank(severity: Severity) -> int:
    """2 for errors, 1 for warnings, 0 for notes: compare severities with this."""
    return len(SEVERITIES) - 1 - SEVERITIES.index(severity)


def demote(severity: Severity) -> Severity:
    """One level less severe (a note stays a note)."""
    return SEVERITIES[min(SEVERITIES.index(severity) + 1, len(SEVERITIES) - 1)]


@frozen
class Detection:
    """What a rule looks for in the source (see the header of ``rules/scan.toml``)."""

    matches: tuple[EventKind, ...] = ()
    apis: tuple[str, ...] = ()
    methods: tuple[str, ...] = ()
    device_strings: tuple[str, ...] = ()
    compared_device_strings: tuple[str, ...] = ()
    literals: tuple[str, ...] = ()
    literal_prefixes: tuple[str, ...] = ()
    words: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    check: CheckName | None = None
    calls: tuple[str, ...] = ()
    argument: str = ""  # check = "argument": this keyword, or the positional at `position`
    position: int = -1
    values: tuple[str, ...] = ()  # ... equal to one of these
    prefixes: tuple[str, ...] = ()  # ... or starting with one of these
    ignore: tuple[str, ...] = ()  # roles of a use that do not count: compare, key, cpu
    related_apis: dict[str, tuple[str, ...]] = field(default_factory=dict)
    related_methods: dict[str, tuple[str, ...]] = field(default_factory=dict)
    library_line: str = ""  # "xla": the imports and commands of the matrix's libraries on it
    needs_device: bool = False  # only uses whose tensor reaches a device (made or moved there)

    def is_empty(self) -> bool:
        api_uses = bool(self.matches and self.apis)
        others = (
            self.methods,
            self.device_strings,
            self.compared_device_strings,
            self.literals,
            self.literal_prefixes,
            self.words,
            self.commands,
        )
        return not api_uses and not any(others) and self.check is None


@frozen
class Variant:
    """Another form of a rule's finding, with its own severity and message."""

    severity: Severity
    message: str
    suggestion: str = ""


@frozen
class Rule:
    """One scan rule, ready to run against one Neuron release."""

    id: str
    category: str  # xla-migration, cuda-portability, limitation or scanner
    severity: Severity
    title: str
    message: str
    suggestion: str
    help_uri: str
    detect: Detection = field(default_factory=Detection)
    confirmed: bool = True
    origin: str = "neuron-env"
    summary: str = ""  # a limitation's summary from the matrix
    fix: FixKind | None = None
    suggestions: dict[str, str] = field(default_factory=dict)
    variants: dict[str, Variant] = field(default_factory=dict)
    fixes: dict[str, FixKind] = field(default_factory=dict)  # per API name, over `fix`
    by_api: dict[str, Variant] = field(default_factory=dict)
    """Per API prefix or command: its own wording (a library's facts from the matrix)."""

    def variant_for(self, name: str) -> Variant | None:
        """The wording of the longest API prefix (or command) in ``by_api`` covering ``name``."""
        keys = [k for k in self.by_api if name == k or name.startswith(k + ".")]
        return self.by_api[max(keys, key=len)] if keys else None

    @property
    def description(self) -> str:
        """A sentence that describes the rule without a particular finding."""
        return self.summary or f"{self.title}. {self.suggestion}"


@frozen
class RuleSet:
    """The rules for one release, in the order they are listed."""

    release: str
    rules: tuple[Rule, ...]
    oldest_python: tuple[int, int] = (3, 10)  # the oldest Python the release supports

    def get(self, rule_id: str) -> Rule:
        return next(r for r in self.rules if r.id == rule_id)

    @functools.cached_property
    def triggers(self) -> frozenset[str]:
        """Texts without which a file cannot have a finding (so its walk can be skipped)."""
        words: set[str] = set()
        for rule in self.rules:
            detect = rule.detect
            words.update(api.split(".")[0] for api in (*detect.apis, *detect.calls))
            words.update(detect.device_strings + detect.compared_device_strings)
            words.update(detect.literals + detect.literal_prefixes + detect.words + detect.commands)
            if detect.methods:
                words.add("torch")  # method rules apply to modules that import torch
        return frozenset(words)

    def may_match(self, text: str) -> bool:
        return any(word in text for word in self.triggers)


@frozen
class Span:
    """A region of a file: 1-based lines and columns (columns count characters)."""

    line: int
    column: int
    end_line: int
    end_column: int


@frozen
class Edit:
    """Replace ``old``, the text of ``span`` (end exclusive), with ``new``."""

    span: Span
    old: str
    new: str
    remove: bool = False  # remove the statement at span (the planner may leave `pass`)
    needs_torch: bool = False  # `new` names torch, which the module does not import yet


@frozen
class Finding:
    """One thing to change, where it is and how."""

    rule: Rule
    path: str  # as shown to the user: relative to the report's root when inside it
    file: Path  # where it was read from
    span: Span
    severity: Severity
    message: str
    suggestion: str
    fix: Edit | None = None
    cell: int | None = None  # in a notebook: the cell (1-based); the span is within that cell

    @property
    def sort_key(self) -> tuple[str, int, int, int, str]:
        return (self.path, self.cell or 0, self.span.line, self.span.column, self.rule.id)

    @property
    def where(self) -> str:
        """``train.py:3:8`` or, in a notebook, ``eval.ipynb:cell 4:3:8``."""
        cell = f"cell {self.cell}:" if self.cell is not None else ""
        return f"{self.path}:{cell}{self.span.line}:{self.span.column}"


@frozen
class ScanReport:
    """Everything one scan found."""

    rules: RuleSet
    root: str
    files: tuple[str, ...]
    findings: tuple[Finding, ...]
    outside: frozenset[str] = frozenset()  # files reached through links leaving the tree

    def counts(self) -> dict[Severity, int]:
        return {s: sum(1 for f in self.findings if f.severity == s) for s in SEVERITIES}

    def failing(self, fail_on: Severity) -> tuple[Finding, ...]:
        """The findings at or above ``fail_on``."""
        return tuple(f for f in self.findings if rank(f.severity) >= rank(fail_on))

    def exit_code(self, fail_on: Severity) -> int:
        return 1 if self.failing(fail_on) else 0

    def fixable(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.fix is not None)
