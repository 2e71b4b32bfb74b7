"""Environment checks: Neuron variables and the compile-cache/debug directories."""

from __future__ import annotations

import shlex

from neuron_env.checks.cores import core_count, parse_core_list
from neuron_env.checks.device_identity import driver_identity
from neuron_env.checks.model import Context, Verdict, fail, ok, skip, warn
from neuron_env.checks.versions import loose_version
from neuron_env.facts import HostFacts
from neuron_env.variable_rules import VariableRule, variable_rules
from neuron_env.wording import plural

GIB = 1024**3
FREE_FAIL_GIB = 1
FREE_WARN_GIB = 10
LNC = "NEURON_LOGICAL_NC_CONFIG"
DEFAULT_LNC = "2"  # on Trn2 and Trn3 (logical-neuroncore-config.rst; reference/aws.md)
# The compiler's LNC flag, as NEURON_CC_FLAGS may spell it (neuronx-cc --logical-nc-config, --lnc,
# -lnc; logical-neuroncore-config.rst and compiler/error-codes/EARG001.rst).
LNC_FLAGS = ("--logical-nc-config", "--lnc", "-lnc")
PJRT_LIBRARY = "libneuronpjrt"


def check_variables(facts: HostFacts, ctx: Context) -> Verdict:
    """``env.variables``: Neuron variables hold valid values (LNC 1 or 2, core lists, a compiler
    LNC equal to the runtime's); variables only the XLA line reads, variables Neuron deprecates and
    a disabled backend autoload are named, each with what replaces it."""
    assert facts.env is not None
    env = facts.env.variables
    errors = [*_invalid(env), *_lnc_mismatch(env, _default_lnc_known(facts, ctx))]
    if errors:
        return fail("; ".join(e for e, _ in errors), fix=_fix_for(errors))
    flagged = _flagged(facts, ctx)
    notes = _notes(flagged)
    if env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0":
        notes.append(
            "TORCH_DEVICE_BACKEND_AUTOLOAD=0: programs must 'import torch_neuronx' themselves"
        )
        flagged.append(("TORCH_DEVICE_BACKEND_AUTOLOAD", None))
    if notes:
        names = [name for name, _ in flagged]
        return warn("; ".join(notes), fix=_unset(names), detail=_replacements(flagged))
    if not env:
        return ok("No Neuron variables set (defaults apply)")
    shown = ", ".join(f"{k}={v}" for k, v in env.items())
    return ok(f"{plural(len(env), 'Neuron variable')} set, all valid", detail=shown)


def _flagged(facts: HostFacts, ctx: Context) -> list[tuple[str, VariableRule | None]]:
    """The variables set here that a rule names: the XLA line's (unless the target is the XLA
    line, which reads them) and deprecated ones. NEURON_LIBRARY_PATH counts only pointing at the
    XLA line's PJRT plugin, libneuronpjrt.so."""
    assert facts.env is not None
    if not facts.env.variables:  # nothing to name: the rules' TOML stays unparsed (start-up time)
        return []
    rules, xla_target = variable_rules(), _xla_line_target(facts, ctx)
    flagged: list[tuple[str, VariableRule | None]] = []
    for name, value in facts.env.variables.items():
        rule = rules.rule_for(name)
        if rule is None or (rule.xla_line and xla_target):
            continue
        if name == "NEURON_LIBRARY_PATH" and PJRT_LIBRARY not in value:
            continue
        flagged.append((name, rule))
    order = {name: i for i, name in enumerate(rules.names)}  # the rules' order: theirs, then A-Z
    return sorted(flagged, key=lambda item: (order.get(item[0], len(order)), item[0]))


def _notes(flagged: list[tuple[str, VariableRule | None]]) -> list[str]:
    xla = [name for name, rule in flagged if rule and rule.xla_line]
    old = [name for name, rule in flagged if rule and rule.deprecated]
    notes = []
    if xla:
        notes.append(
            f"{', '.join(xla)} belong to PyTorch/XLA (the XLA line of torch-neuronx and its PJRT "
            "plugin) and are ignored by TorchNeuron"
        )
    if old:
        notes.append(f"{', '.join(old)} {'is' if len(old) == 1 else 'are'} deprecated by Neuron")
    return notes


def _replacements(flagged: list[tuple[str, VariableRule | None]]) -> str:
    """One line per variable: what replaces it, and where that is written."""
    lines = []
    for name, rule in flagged:
        if rule is None:
            continue
        unconfirmed = "" if rule.confirmed else " (unconfirmed: no public source was found)"
        source = f" [scan rule {rule.rule}{'; ' + rule.docs if '://' in rule.docs else ''}]"
        lines.append(f"{name}: {rule.replacement}{unconfirmed}{source}")
    return "\n".join(lines)


def _xla_line_target(facts: HostFacts, ctx: Context) -> bool:
    """The target runs the XLA line (its torch-neuronx is an XLA build, or torch-xla is there):
    the XLA line's variables are its own."""
    python = facts.python
    if ctx.legacy_family:  # Trn1/Inf2: the XLA line is what runs there
        return True
    if python is None:
        return False
    if python.dist("torch-xla") is not None:
        return True
    dist = python.dist("torch-neuronx")
    version = loose_version(dist.version) if dist else None
    return version is not None and version in ctx.release.legacy_xla.versions


def _default_lnc_known(facts: HostFacts, ctx: Context) -> bool:
    """Whether the runtime's default LNC=2 holds here: a Trn2/Trn3 host, or one whose family is
    unknown (a snapshot, a workstation). On Trn1 and Inf2 only LNC=1 exists (EARG001.rst)."""
    name = facts.ec2.instance_type if facts.ec2 else None
    identity = driver_identity(facts)
    family = ctx.release.family_of(name) if name else (identity.family if identity else None)
    known = ctx.release.families.get(family or "")
    return known is None or known.native


def _lnc_mismatch(env: dict[str, str], default_known: bool = True) -> list[tuple[str, str]]:
    """A compiler LNC in NEURON_CC_FLAGS other than the runtime's NEURON_LOGICAL_NC_CONFIG: the
    graphs are built for one core layout and run on another (the compiler's NCC_EARG001 names an
    LNC the target cannot take)."""
    flags = env.get("NEURON_CC_FLAGS", "")
    flag = _compiler_lnc(flags)
    if flag is not None and flag not in ("1", "2"):
        kept = shlex.quote(_without_lnc(flags))
        return [(f"NEURON_CC_FLAGS asks the compiler for LNC={flag} (only 1 or 2 is supported)",
                 f"export NEURON_CC_FLAGS={kept}")]  # fmt: skip
    if LNC not in env and not default_known:
        return []
    runtime = env.get(LNC, DEFAULT_LNC)
    if flag is None or flag == runtime or runtime not in ("1", "2"):
        return []
    where = f"{LNC}={runtime}" if LNC in env else f"the runtime's default LNC={DEFAULT_LNC}"
    return [(
        f"NEURON_CC_FLAGS compiles for LNC={flag} (its {flag!r} LNC flag) but {where}: the "
        "compiled graphs will not run (NCC_EARG001)",
        f"export {LNC}={shlex.quote(flag)}",
    )]  # fmt: skip


def _compiler_lnc(flags: str) -> str | None:
    """The value of the last LNC flag in NEURON_CC_FLAGS (``--lnc 2``, ``--lnc=2``, ``-lnc 2``,
    ``--logical-nc-config=1``); None when there is none or the text is not shell words."""
    try:
        words = shlex.split(flags)
    except ValueError:
        return None
    found = None
    for i, word in enumerate(words):
        name, eq, value = word.partition("=")
        if name in LNC_FLAGS:
            found = value if eq else (words[i + 1] if i + 1 < len(words) else None)
    return found


def _without_lnc(flags: str) -> str:
    """NEURON_CC_FLAGS without its LNC flags (and their values)."""
    words, kept, skip_next = shlex.split(flags), [], False
    for word in words:
        if skip_next:
            skip_next = False
        elif word in LNC_FLAGS:
            skip_next = True
        elif word.partition("=")[0] not in LNC_FLAGS:
            kept.append(word)
    return shlex.join(kept)


def _fix_for(errors: list[tuple[str, str]]) -> str:
    """Unset the invalid variables; an ``export`` stands as it is."""
    names = [n for _, n in errors if not n.startswith("export ")]
    exports = [n for _, n in errors if n.startswith("export ")]
    return " && ".join([*([_unset(names)] if names else []), *exports])


def _invalid(env: dict[str, str]) -> list[tuple[str, str]]:
    """(problem, variable) for each invalid value."""
    errors = []
    lnc = env.get("NEURON_LOGICAL_NC_CONFIG")
    if lnc is not None and lnc not in ("1", "2"):
        errors.append(
            (
                f"NEURON_LOGICAL_NC_CONFIG={lnc} (only 1 or 2 is supported)",
                "NEURON_LOGICAL_NC_CONFIG",
            )
        )
    for name, parse in (
        ("NEURON_RT_VISIBLE_CORES", parse_core_list),
        ("NEURON_RT_NUM_CORES", core_count),
    ):
        value = env.get(name)
        try:
            _ = value is None or parse(value)
        except ValueError as exc:  # checked as ranges: 0-999999999 is never expanded
            errors.append((f"{name}={value} ({exc})", name))
    return errors


def _unset(names: list[str]) -> str:
    """``unset A B`` (the defaults then apply); set a valid value instead where one is needed."""
    return "unset " + " ".join(shlex.quote(n) for n in names)


def check_cache(facts: HostFacts, ctx: Context) -> Verdict:
    """``env.cache``: the compile cache and debug directories are writable and have free space."""
    assert facts.env is not None
    problems, warnings = [], []
    if not facts.env.cache_dirs:  # the probe always lists them: only a hand-made snapshot
        return skip("No compile cache or debug directories in the facts; not inspected")
    for entry in facts.env.cache_dirs:
        free_gib = (entry.free_bytes or 0) / GIB
        where = f"{entry.path} ({entry.variable})"
        if not entry.writable:
            problems.append(f"{where} is not writable")
        elif entry.free_bytes is not None and free_gib < FREE_FAIL_GIB:
            problems.append(f"{where} has only {free_gib:.1f} GiB free")
        elif entry.free_bytes is not None and free_gib < FREE_WARN_GIB:
            warnings.append(f"{where} has {free_gib:.1f} GiB free")
    fix = "Point the variable at a writable directory with room for compiled graphs (NEFFs)."
    if problems:
        return fail("; ".join(problems), fix=fix)
    if warnings:
        return warn("; ".join(warnings), fix=fix)
    dirs = ", ".join(e.path for e in facts.env.cache_dirs)
    return ok(f"Compile cache and debug directories writable ({dirs})")
