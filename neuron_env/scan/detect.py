"""Detectors: match a module's uses (:mod:`.uses`) against the rules, producing findings.

Each detector reads one kind of use; which rules it serves is the rule's ``detect`` data. When
several rules match the same import or reference, the one naming the longest API wins (so
``xm.xla_device()`` is an ``xla-device`` finding, not also a generic ``xla-api`` one).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from neuron_env.scan.model import Edit, EventKind, Finding, Rule, RuleSet, Span, Variant
from neuron_env.scan.source import SourceFile
from neuron_env.scan.uses import ModuleUses, Reference


def detect(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> list[Finding]:
    """Every finding of every rule in one module."""
    found = [
        *_api_uses(uses, rules, source),
        *_method_calls(uses, rules, source),
        *_device_strings(uses, rules, source),
        *_string_constants(uses, rules, source),
        *_compile_calls(uses, rules, source),
    ]
    return sorted(found, key=lambda f: f.sort_key)


def finding(
    rule: Rule,
    source: SourceFile,
    span: Span,
    name: str,
    *,
    variant: Variant | None = None,
    fix: Edit | None = None,
) -> Finding:
    """A finding of ``rule`` at ``span`` with its message filled in for ``name``."""
    template = variant.message if variant else rule.message
    message = template.format(name=name, summary=rule.summary)
    if not rule.confirmed:
        message += " (unconfirmed)"
    suggestion = (variant.suggestion if variant else "") or rule.suggestions.get(name, "")
    return Finding(
        rule=rule,
        path=source.display,
        file=source.path,
        span=span,
        severity=variant.severity if variant else rule.severity,
        message=message,
        suggestion=suggestion or rule.suggestion,
        fix=fix,
    )


# --- imports and references -------------------------------------------------------------------


def best_rule(name: str, rules: RuleSet, kind: EventKind) -> Rule | None:
    """The rule whose API covers ``name`` most specifically, for uses of this kind."""
    best: tuple[int, Rule] | None = None
    for rule in rules.rules:
        if kind not in rule.detect.matches:
            continue
        for api in rule.detect.apis:
            covers = name == api or name.startswith(api + ".")
            if covers and (best is None or len(api) > best[0]):
                best = (len(api), rule)
    return best[1] if best else None


def _api_uses(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    for imported in uses.imports:
        rule = best_rule(imported.name, rules, "import")
        if rule is not None:
            yield finding(rule, source, source.span(imported.node), imported.name)
    for ref in uses.references:
        rule = best_rule(ref.name, rules, "reference")
        if rule is not None:
            fix = _device_call_fix(rule, ref, source)
            yield finding(rule, source, source.span(ref.node), ref.name, fix=fix)


def _is_plain_call(ref: Reference) -> bool:
    return ref.call is not None and not ref.call.args and not ref.call.keywords


def _device_call_fix(rule: Rule, ref: Reference, source: SourceFile) -> Edit | None:
    """``xm.xla_device()`` → ``torch.device("neuron")``, when torch is imported in the module."""
    if rule.fix != "neuron-device-call" or ref.call is None or not _is_plain_call(ref):
        return None
    torch_name = ref.scope.name_for("torch")
    if torch_name is None:
        return None
    span = source.span(ref.call)
    return Edit(span, source.segment(span), f'{torch_name}.device("neuron")')


# --- method calls, device strings, string constants -------------------------------------------


def _method_calls(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    if not uses.imports_torch:
        return  # `.double()` or `.cuda()` in a module without torch is someone else's method
    for call in uses.method_calls:
        for rule in rules.rules:
            if call.method in rule.detect.methods:
                yield finding(rule, source, source.span(call.node), f".{call.method}()")


def _device_strings(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    for device in uses.device_strings:
        node = device.node
        name = node.value if isinstance(node, ast.Constant) else f"{device.device}:…"
        for rule in rules.rules:
            if device.device in rule.detect.device_strings:
                span = source.span(node)
                fix = _device_string_fix(rule, device.device, source, span, device.literal)
                yield finding(rule, source, span, str(name), fix=fix)


def _device_string_fix(
    rule: Rule, device: str, source: SourceFile, span: Span, literal: bool
) -> Edit | None:
    """``"xla"`` → ``"neuron"`` and ``'xla:1'`` → ``'neuron:1'``, keeping prefix and quotes."""
    if rule.fix != "neuron-device-string" or not literal:
        return None
    old = source.segment(span)
    pattern = rf"([rRuU]?)('''|\"\"\"|'|\"){re.escape(device)}(:\d+)?\2"
    match = re.fullmatch(pattern, old)
    if match is None:
        return None  # e.g. implicitly concatenated strings: leave them to a person
    prefix, quote, index = match.group(1), match.group(2), match.group(3) or ""
    return Edit(span, old, f"{prefix}{quote}neuron{index}{quote}")


def _string_constants(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    word_rules = [(rule, _words_pattern(rule.detect.words)) for rule in rules.rules]
    for constant in uses.strings:
        for rule, words in word_rules:
            if constant.value in rule.detect.literals:
                yield finding(rule, source, source.span(constant.node), constant.value)
            elif words is not None and (match := words.search(constant.value)):
                yield finding(rule, source, source.span(constant.node), match.group(0))


def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str] | None:
    if not words:
        return None
    return re.compile(r"\b(?:" + "|".join(re.escape(w) for w in words) + r")\b")


# --- torch.compile keyword checks ---------------------------------------------------------------


def _compile_calls(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    for rule in rules.rules:
        if rule.detect.check is None:
            continue
        for ref in uses.references:
            if ref.name in rule.detect.calls:
                yield from _check_compile(rule, ref, source)


def _check_compile(rule: Rule, ref: Reference, source: SourceFile) -> Iterator[Finding]:
    call = ref.call if ref.call is not None and ref.call.func is ref.node else None
    if call is None:
        if ref.decorator and rule.detect.check == "compile-dynamic":  # a bare @torch.compile
            yield _unset_dynamic(rule, ref.node, ref.name, source)
        return
    keywords = {k.arg: k for k in call.keywords if k.arg is not None}
    if any(k.arg is None for k in call.keywords):
        return  # **options may set anything
    if rule.detect.check == "compile-dynamic":
        yield from _dynamic(rule, keywords.get("dynamic"), call, ref.name, source)
    else:
        yield from _mode(rule, keywords.get("mode"), source)


def _dynamic(
    rule: Rule, keyword: ast.keyword | None, call: ast.Call, name: str, source: SourceFile
) -> Iterator[Finding]:
    value = keyword.value if keyword else None
    if keyword is not None and isinstance(value, ast.Constant) and value.value is True:
        yield finding(rule, source, source.span(keyword), name)
    elif keyword is None or (isinstance(value, ast.Constant) and value.value is None):
        yield _unset_dynamic(rule, call.func, name, source)


def _unset_dynamic(rule: Rule, node: ast.expr, name: str, source: SourceFile) -> Finding:
    variant = rule.variants.get("unset")
    return finding(rule, source, source.span(node), name, variant=variant)


def _mode(rule: Rule, keyword: ast.keyword | None, source: SourceFile) -> Iterator[Finding]:
    if keyword is None or not isinstance(keyword.value, ast.Constant):
        return
    mode = keyword.value.value
    if isinstance(mode, str) and mode != "default":
        yield finding(rule, source, source.span(keyword), mode)
