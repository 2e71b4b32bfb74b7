"""Environment checks: Neuron variables and the compile-cache/debug directories."""

from __future__ import annotations

import shlex

from neuron_env.checks.cores import core_count, parse_core_list
from neuron_env.checks.model import Context, Verdict, fail, ok, skip, warn
from neuron_env.facts import HostFacts
from neuron_env.wording import plural

LEGACY_XLA_VARIABLES = ("XLA_USE_BF16", "XLA_DOWNCAST_BF16", "XLA_FLAGS", "PJRT_DEVICE")
GIB = 1024**3
FREE_FAIL_GIB = 1
FREE_WARN_GIB = 10


def check_variables(facts: HostFacts, ctx: Context) -> Verdict:
    """``env.variables``: Neuron variables hold valid values (LNC 1 or 2, core lists); legacy XLA
    variables and a disabled backend autoload are noted."""
    assert facts.env is not None
    env = facts.env.variables
    errors = _invalid(env)
    if errors:
        return fail("; ".join(e for e, _ in errors), fix=_unset([n for _, n in errors]))
    notes = []
    # on Trn1/Inf2 the PyTorch/XLA line runs, and reads them: nothing to unset
    legacy = [n for n in LEGACY_XLA_VARIABLES if n in env and not ctx.legacy_family]
    if legacy:
        notes.append(
            f"{', '.join(legacy)} belong to PyTorch/XLA and are ignored by TorchNeuron "
            "(use torch.autocast(device_type='neuron') for bf16)"
        )
    if env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0":
        notes.append(
            "TORCH_DEVICE_BACKEND_AUTOLOAD=0: programs must 'import torch_neuronx' themselves"
        )
    if notes:
        autoload = (
            ["TORCH_DEVICE_BACKEND_AUTOLOAD"]
            if env.get("TORCH_DEVICE_BACKEND_AUTOLOAD") == "0"
            else []
        )
        return warn("; ".join(notes), fix=_unset([*legacy, *autoload]))
    if not env:
        return ok("No Neuron variables set (defaults apply)")
    shown = ", ".join(f"{k}={v}" for k, v in env.items())
    return ok(f"{plural(len(env), 'Neuron variable')} set, all valid", detail=shown)


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
