"""``neuron-env scan``: find code that TorchNeuron runs differently, statically (no torch needed).

Pipeline: files (:mod:`.engine`; Python, :mod:`.notebook` cells, :mod:`.shell` scripts) →
:class:`~.source.SourceFile` → syntax tree → uses with import aliases resolved (:mod:`.uses`,
:mod:`.positions`) → findings of the release's rules (:mod:`.rules`, :mod:`.detect`, with fixes
from :mod:`.rewrite`) → report → text, JSON or SARIF (:mod:`.render_text`, :mod:`.render_json`);
:mod:`.fix` plans and writes the fixes (:mod:`.cleanup` for blocks and imports, :mod:`.grammar`
to prove each result parses). Pure: it reads files, writes only what ``--fix`` is told to, and
never imports torch.
"""

from neuron_env.scan.engine import ScanOptions, scan, scan_file
from neuron_env.scan.fix import FilePatch, plan_fixes
from neuron_env.scan.model import SEVERITIES, Finding, Rule, RuleSet, ScanReport, Severity
from neuron_env.scan.rules import load_rule_file, rules_for

__all__ = [
    "SEVERITIES",
    "FilePatch",
    "Finding",
    "Rule",
    "RuleSet",
    "ScanOptions",
    "ScanReport",
    "Severity",
    "load_rule_file",
    "plan_fixes",
    "rules_for",
    "scan",
    "scan_file",
]
