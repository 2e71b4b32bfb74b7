"""Detectors: match a module's uses (:mod:`.uses`) against the rules, producing findings.

Each detector reads one kind of use; which rules it serves is the rule's ``detect`` data. When
several rules match the same import or reference, the one naming the longest API wins (so
``xm.xla_device()`` is an ``xla-device`` finding, not also a generic ``xla-api`` one).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator

from neuron_env.scan.model import Edit, EventKind, Finding, Rule, RuleSet, Span, Variant
from neuron_env.scan.positions import ON_CPU
from neuron_env.scan.rewrite import reference_fix
from neuron_env.scan.source import SourceFile
from neuron_env.scan.uses import ModuleUses, Reference


def detect(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> list[Finding]:
    """Every finding of every rule in one module."""
    found = [
        *_api_uses(uses, rules, source),
        *_method_calls(uses, rules, source),
        *_device_strings(uses, rules, source),
        *_string_constants(uses, rules, source),
        *_call_checks(uses, rules, source),
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
    variant = variant or rule.variant_for(name)
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
        if rule is not None and not rule.detect.needs_device:  # an import computes nothing
            yield finding(rule, source, source.span(imported.node), imported.name)
    for ref in uses.references:
        rule = best_rule(ref.name, rules, "reference")
        if rule is None or (rule.detect.needs_device and not _reaches_device(ref, uses)):
            continue
        if ref.role not in rule.detect.ignore:
            fix = reference_fix(rule.fixes.get(ref.name, rule.fix), ref, source)
            yield finding(rule, source, source.span(ref.node), ref.name, fix=fix)


def _reaches_device(ref: Reference, uses: ModuleUses) -> bool:
    """``torch.DoubleTensor([...])`` is made by its own call; ``dtype=torch.float64`` by the
    call it is passed to."""
    made_by = ref.call if ref.call is not None and ref.call.func is ref.node else ref.argument_of
    return uses.reaches_device(ref.node, made_by)


# --- method calls, device strings, string constants -------------------------------------------


def _method_calls(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    if not uses.imports_torch:
        return  # `.double()` or `.cuda()` in a module without torch is someone else's method
    for call in uses.method_calls:
        for rule in rules.rules:
            if (
                call.method in rule.detect.methods
                and not (call.on_cpu and ON_CPU in rule.detect.ignore)
                and not (rule.detect.needs_device and not uses.reaches_device(call.node, call.node))
            ):
                yield finding(rule, source, source.span(call.node), f".{call.method}()")


def _device_strings(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    for device in uses.device_strings:
        node = device.node
        name = node.value if isinstance(node, ast.Constant) else f"{device.device}:…"
        for rule in rules.rules:
            wanted = (
                rule.detect.compared_device_strings
                if device.compared
                else rule.detect.device_strings
            )
            if device.device in wanted:
                span = source.span(node)
                fix = _device_string_fix(rule, device.device, source, span, device.literal)
                yield finding(rule, source, span, str(name), fix=fix)


def _device_string_fix(
    rule: Rule, device: str, source: SourceFile, span: Span, literal: bool
) -> Edit | None:
    """``"xla"`` → ``"neuron"`` and ``'xla:1'`` → ``'neuron:1'``, keeping prefix and quotes."""
    if rule.fix != "neuron-device-string" or not literal:
        return None
    value = rf"{re.escape(device)}(:\d+)?"
    return literal_edit(source, span, value, lambda match: f"neuron{match[1] or ''}")


def literal_edit(
    source: SourceFile, span: Span, value: str, new: Callable[[re.Match[str]], str]
) -> Edit | None:
    """Replace the content of one plain string literal matching ``value``, keeping its quotes."""
    old = source.segment(span)
    match = re.fullmatch(r"([rRuU]?)('''|\"\"\"|'|\")(.*)\2", old, re.DOTALL)
    inner = re.fullmatch(value, match.group(3)) if match else None
    if match is None or inner is None:
        return None  # e.g. implicitly concatenated strings: leave them to a person
    prefix, quote = match.group(1), match.group(2)
    return Edit(span, old, f"{prefix}{quote}{new(inner)}{quote}")


def _string_constants(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    patterns = [(rule, _string_pattern(rule)) for rule in rules.rules]
    for constant in uses.strings:
        for rule, pattern in patterns:
            if constant.value in rule.detect.literals:
                yield finding(rule, source, source.span(constant.node), constant.value)
            elif pattern is not None and (match := pattern.search(constant.value)):
                yield finding(rule, source, source.span(constant.node), match.group("name"))


_ENV_NAME = r"[A-Z0-9_]*"
# A command where a shell would run it: at the start, after ; && || | ( $( ` then do else, a
# VAR=value prefix, sudo/env/exec/time/nohup/timeout N, or a directory; not a word in a message.
COMMAND_POSITION = (
    r"(?:^|[;&|(`]|\$\()\s*"
    r"(?:(?:sudo|env|exec|time|nohup|then|do|else|!)\s+|timeout\s+\S+\s+|[A-Za-z_]\w*=\S*\s+)*"
    r"(?:\S*/)?"
)


# In a Python string, the command must also be followed by what a launch line has next (an
# option, a launcher, a script, a variable) or by nothing: "neuron_parallel_compile python
# train.py", not "neuron_parallel_compile is not needed".
_LAUNCH_NEXT = (
    r"(?=\s*$|\s+(?:-|\$|\S*python\S*(?:\s|$)|torchrun|bash|sh\b|srun|mpirun|\S+\.(?:py|sh)\b))"
)


def command_pattern(commands: tuple[str, ...], *, in_string: bool = True) -> str:
    """A regex finding ``commands`` run as commands; group ``name`` is the command."""
    names = "|".join(re.escape(c) for c in commands)
    return rf"{COMMAND_POSITION}(?P<name>{names})(?![\w.-]){_LAUNCH_NEXT if in_string else ''}"


def _string_pattern(rule: Rule) -> re.Pattern[str] | None:
    detect, parts = rule.detect, []
    if detect.words:
        parts.append(r"\b(?P<name>" + "|".join(re.escape(w) for w in detect.words) + r")\b")
    if detect.literal_prefixes:
        prefixes = "|".join(re.escape(p) for p in detect.literal_prefixes)
        parts.append(rf"^(?P<name>(?:{prefixes}){_ENV_NAME})$")
    if detect.commands:
        parts.append(command_pattern(detect.commands))
    return re.compile(parts[0]) if len(parts) == 1 else None if not parts else _first(parts)


def _first(parts: list[str]) -> re.Pattern[str]:
    raise ValueError(f"a rule may have one of words, literal-prefixes, commands: {parts}")


# --- keyword and argument checks of calls ------------------------------------------------------


def _call_checks(uses: ModuleUses, rules: RuleSet, source: SourceFile) -> Iterator[Finding]:
    for rule in rules.rules:
        if rule.detect.check is None:
            continue
        for ref in uses.references:
            if ref.name not in rule.detect.calls:
                continue
            if rule.detect.check == "saved-result":
                yield from _saved_result(rule, ref, uses, source)
            else:
                yield from _check_call(rule, ref, source)


def _saved_result(
    rule: Rule, ref: Reference, uses: ModuleUses, source: SourceFile
) -> Iterator[Finding]:
    """``torch.jit.save(traced, path)`` where ``traced = torch_neuronx.trace(...)`` in this
    module, or ``torch.jit.save(torch_neuronx.trace(...), path)``."""
    call = ref.call if ref.call is not None and ref.call.func is ref.node else None
    if call is None or not call.args:
        return
    saved, made_by = call.args[0], set()
    if isinstance(saved, ast.Name):
        made_by = uses.call_results.get(saved.id, set())
    elif isinstance(saved, ast.Call):
        made_by = {r.name for r in uses.references if r.node is saved.func}
    if made_by & set(rule.detect.values):
        yield finding(rule, source, source.span(call.func), ref.name)


def _check_call(rule: Rule, ref: Reference, source: SourceFile) -> Iterator[Finding]:
    call = ref.call if ref.call is not None and ref.call.func is ref.node else None
    check = rule.detect.check
    if call is None:
        if ref.decorator and check in ("compile-dynamic", "compile-backend"):  # @torch.compile
            yield _unset(rule, ref.node, ref.name, source)
        return
    keywords = {k.arg: k for k in call.keywords if k.arg is not None}
    if check == "argument":
        yield from _argument(rule, call, keywords, source)
    elif any(k.arg is None for k in call.keywords):
        return  # **options may set anything
    elif check == "compile-dynamic":
        yield from _dynamic(rule, keywords.get("dynamic"), call, ref.name, source)
    elif check == "compile-backend":
        if "backend" not in keywords:
            yield finding(rule, source, source.span(call.func), ref.name)
    else:
        yield from _mode(rule, keywords.get("mode"), source)


def _argument(
    rule: Rule, call: ast.Call, keywords: dict[str, ast.keyword], source: SourceFile
) -> Iterator[Finding]:
    """``init_process_group("xla")``, ``backend="openxla"``, ``init_method="pjrt://"``."""
    detect = rule.detect
    keyword = keywords.get(detect.argument)
    value = keyword.value if keyword else None
    if value is None and 0 <= detect.position < len(call.args):
        value = call.args[detect.position]
    if not isinstance(value, ast.Constant) or not isinstance(value.value, str):
        return
    text = value.value
    if text in detect.values or any(text.startswith(p) for p in detect.prefixes):
        span = source.span(value)
        yield finding(rule, source, span, text, fix=_argument_fix(rule, source, span, text))


def _argument_fix(rule: Rule, source: SourceFile, span: Span, text: str) -> Edit | None:
    new = {"neuron-string": "neuron", "env-init": "env://"}.get(rule.fix or "")
    if new is None:
        return None
    return literal_edit(source, span, re.escape(text), lambda _: new)


def _dynamic(
    rule: Rule, keyword: ast.keyword | None, call: ast.Call, name: str, source: SourceFile
) -> Iterator[Finding]:
    value = keyword.value if keyword else None
    if keyword is not None and isinstance(value, ast.Constant) and value.value is True:
        yield finding(rule, source, source.span(keyword), name)
    elif keyword is None or (isinstance(value, ast.Constant) and value.value is None):
        yield _unset(rule, call.func, name, source)


def _unset(rule: Rule, node: ast.expr, name: str, source: SourceFile) -> Finding:
    variant = rule.variants.get("unset")
    return finding(rule, source, source.span(node), name, variant=variant)


def _mode(rule: Rule, keyword: ast.keyword | None, source: SourceFile) -> Iterator[Finding]:
    if keyword is None or not isinstance(keyword.value, ast.Constant):
        return
    mode = keyword.value.value
    if isinstance(mode, str) and mode != "default":
        yield finding(rule, source, source.span(keyword), mode)
