"""Environment checks: Neuron variables and the compile-cache/debug directories."""

from __future__ import annotations

import re

from neuron_env.checks.model import Context, Verdict, fail, ok, warn
from neuron_env.facts import HostFacts
from neuron_env.wording import plural

LEGACY_XLA_VARIABLES = ("XLA_USE_BF16", "XLA_DOWNCAST_BF16", "XLA_FLAGS", "PJRT_DEVICE")
CORE_LIST = re.compile(r"^\d+(-\d+)?(,\d+(-\d+)?)*$")
GIB = 1024**3
FREE_FAIL_GIB = 1
FREE_WARN_GIB = 10


def check_variables(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.env is not None
    env = facts.env.variables
    errors = _invalid(env)
    if errors:
        return fail("; ".join(errors), fix="Fix or unset these variables.")
    notes = []
    legacy = [name for name in LEGACY_XLA_VARIABLES if name in env]
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
        return warn("; ".join(notes), fix="Unset the variables you do not need.")
    if not env:
        return ok("No Neuron variables set (defaults apply)")
    shown = ", ".join(f"{k}={v}" for k, v in env.items())
    return ok(f"{plural(len(env), 'Neuron variable')} set, all valid", detail=shown)


def _invalid(env: dict[str, str]) -> list[str]:
    errors = []
    lnc = env.get("NEURON_LOGICAL_NC_CONFIG")
    if lnc is not None and lnc not in ("1", "2"):
        errors.append(f"NEURON_LOGICAL_NC_CONFIG={lnc} (only 1 or 2 is supported)")
    cores = env.get("NEURON_RT_VISIBLE_CORES")
    if cores is not None and not CORE_LIST.match(cores.replace(" ", "")):
        errors.append(f"NEURON_RT_VISIBLE_CORES={cores} (expected e.g. 0-3 or 0,2)")
    count = env.get("NEURON_RT_NUM_CORES")
    if count is not None and not count.isdigit():
        errors.append(f"NEURON_RT_NUM_CORES={count} (expected a number)")
    return errors


def check_cache(facts: HostFacts, ctx: Context) -> Verdict:
    assert facts.env is not None
    problems, warnings = [], []
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
