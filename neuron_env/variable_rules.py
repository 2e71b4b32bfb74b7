"""What neuron-env knows about environment variables that no longer do what they did: the XLA
line's variables, which TorchNeuron does not read, and variables Neuron's docs deprecate.

There is one list, and scan and doctor both use it. The ``rules/scan.toml`` rules named in
``RULES`` hold the names (``detect.literals``, ``detect.literal-prefixes``), what replaces each
(``suggestions``, else the rule's ``suggestion``) and the sources, in a comment above each rule.
``neuron-env scan`` finds these names in code; ``doctor``'s ``env.variables`` finds them set in
the environment. This module reads only those keys, bounded like any shipped data.
"""

from __future__ import annotations

import functools
from pathlib import Path

from neuron_env.frozen import frozen
from neuron_env.input_files import TOML_LIMITS, InputRejected, Unreadable, load_toml, read_bytes
from neuron_env.resources import scan_rules_file

XLA_RULES = ("xla-env", "xla-pjrt-env", "xla-era-env")
DEPRECATED_RULES = ("deprecated-env",)
RULES = (*XLA_RULES, *DEPRECATED_RULES)


@frozen
class VariableRule:
    """One variable's entry: the rule that names it, what it says, and what replaces it."""

    rule: str
    message: str
    replacement: str
    docs: str
    confirmed: bool
    deprecated: bool

    @property
    def xla_line(self) -> bool:
        """Read only by the XLA line (PyTorch/XLA, the Neuron PJRT plugin), not TorchNeuron."""
        return self.rule in XLA_RULES


@frozen
class VariableRules:
    """The names the rules list, and the prefixes they list (``TPU_``)."""

    names: dict[str, VariableRule]
    prefixes: dict[str, VariableRule]

    def rule_for(self, name: str) -> VariableRule | None:
        """The rule naming ``name`` exactly, else one listing a prefix of it."""
        if name in self.names:
            return self.names[name]
        return next((r for p, r in self.prefixes.items() if name.startswith(p)), None)


@functools.cache
def variable_rules() -> VariableRules:
    """The variable rules of ``rules/scan.toml`` (read once; a run whose file is byte for byte
    an earlier run's takes the rules that run read: :mod:`neuron_env.memo`)."""
    path = scan_rules_file()
    try:
        text = read_bytes(path, TOML_LIMITS.max_bytes)
    except (InputRejected, Unreadable):
        return _read_rules(path)  # which says what is wrong with the file
    from neuron_env.memo import remembered, source_files

    code = source_files(__name__, "neuron_env.input_files")
    return remembered("variable-rules", [bytes(path), text, *code], lambda: _read_rules(path))


def _read_rules(path: Path) -> VariableRules:
    data = load_toml(path, TOML_LIMITS)
    names: dict[str, VariableRule] = {}
    prefixes: dict[str, VariableRule] = {}
    for spec in data.get("rules", []):
        if spec.get("id") not in RULES:
            continue
        detect, suggestions = spec.get("detect", {}), spec.get("suggestions", {})
        for name in detect.get("literals", []):
            names[name] = _rule(spec, suggestions.get(name, spec["suggestion"]), name)
        for prefix in detect.get("literal-prefixes", []):
            prefixes[prefix] = _rule(spec, spec["suggestion"], prefix + "*")
    return VariableRules(names, prefixes)


def _rule(spec: dict[str, object], replacement: str, name: str) -> VariableRule:
    return VariableRule(
        rule=str(spec["id"]),
        message=str(spec["message"]).replace("{name}", name),
        replacement=replacement,
        docs=str(spec.get("docs", "")),
        confirmed=bool(spec.get("confirmed", True)),
        deprecated=spec["id"] in DEPRECATED_RULES,
    )
