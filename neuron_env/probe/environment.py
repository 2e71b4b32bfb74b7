"""Environment variables that steer Neuron and the compile-cache/debug directories they name."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from neuron_env.facts import CacheDir, EnvFacts
from neuron_env.probe.sysroot import Sysroot

PREFIXES = ("NEURON_", "NEURONCORE_", "TORCH_NEURONX_", "XLA_", "PJRT_")
EXACT = (
    "TORCH_DEVICE_BACKEND_AUTOLOAD",
    "NEURON_CC_FLAGS",
    "FI_PROVIDER",
    "FI_EFA_USE_DEVICE_RDMA",
)
# Directories TorchNeuron writes to, with the defaults neuron-env assumes when the variable is
# unset. The debug-dir default is documented; the NEFF cache default comes from pre-release source.
CACHE_DIRS = {
    "TORCH_NEURONX_DEBUG_DIR": "/tmp/neuron_backend",  # noqa: S108 - the documented default
    "TORCH_NEURONX_NEFF_CACHE_DIR": "/tmp/neff_cache",  # noqa: S108 - the pre-release default
}
LEGACY_CACHE_VARIABLE = "NEURON_COMPILE_CACHE_URL"


def probe_environment(sysroot: Path, environ: Mapping[str, str] | None = None) -> EnvFacts:
    env = os.environ if environ is None else environ
    variables = {k: v for k, v in sorted(env.items()) if k.startswith(PREFIXES) or k in EXACT}
    dirs = [(var, env.get(var) or default) for var, default in CACHE_DIRS.items()]
    legacy = env.get(LEGACY_CACHE_VARIABLE)
    if legacy and "://" not in legacy:
        dirs.append((LEGACY_CACHE_VARIABLE, legacy))
    root = Sysroot.at(sysroot)
    return EnvFacts(
        variables=variables,
        cache_dirs=tuple(_cache_dir(var, path, root) for var, path in dirs),
    )


def _cache_dir(variable: str, path: str, root: Sysroot) -> CacheDir:
    """A directory that may not exist yet: judge the nearest existing ancestor it would go in."""
    target = root.resolve(path)  # resolved as the host would: a link may not lead off the host
    existing = next((p for p in (target, *target.parents) if p.exists()), root.root)
    try:
        stats = os.statvfs(existing)
        free: int | None = stats.f_bavail * stats.f_frsize
    except OSError:
        free = None
    return CacheDir(
        variable=variable,
        path=path,
        exists=target.is_dir(),
        writable=os.access(existing, os.W_OK | os.X_OK),
        free_bytes=free,
    )
