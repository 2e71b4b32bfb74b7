"""The per-chip peak from the support matrix, for the matmul throughput case.

Runs on neuron-env's side only (the worker never sees the matrix).
"""

from __future__ import annotations

import os

from neuron_env.errors import BadInput
from neuron_env.matrix import Release
from neuron_env.schema import did_you_mean
from neuron_env.selftest.models import Peak

LNC_VARIABLE = "NEURON_LOGICAL_NC_CONFIG"


def peak_for(
    release: Release, *, chip: str | None = None, instance_type: str | None = None
) -> Peak:
    """The peak of ``chip`` (``trainium2``) or of ``instance_type``'s chip (``trn2.48xlarge``).

    The Logical NeuronCore Config is ``$NEURON_LOGICAL_NC_CONFIG`` when set (as the runtime reads
    it), else the chip's default.
    """
    key = chip if chip is not None else _chip_of(release, instance_type or "")
    found = release.chips.get(key)
    if found is None:
        raise BadInput(
            f"Unknown chip {key!r}.", hint=f"Known chips: {', '.join(sorted(release.chips))}."
        )
    lnc = _lnc(found.lnc, found.default_lnc)
    return Peak(
        chip=found.name,
        tflops=dict(found.peak_tflops),
        logical_cores=found.logical_cores(lnc),
        lnc=lnc,
        source=f"Neuron {release.release.version} matrix",
    )


def _chip_of(release: Release, instance_type: str) -> str:
    spec = release.instance_types.get(instance_type)
    family = release.families.get(spec.family) if spec is not None else None
    if family is None or family.chip is None:
        known = ", ".join(sorted(release.instance_types))
        near = did_you_mean(instance_type, sorted(release.instance_types))
        raise BadInput(
            f"No Trainium chip is known for instance type {instance_type!r}"
            + (f"; {near}" if near else "."),
            hint=f"Known instance types: {known}; or pass --chip.",
        )
    return family.chip


def _lnc(allowed: tuple[int, ...], default: int) -> int:
    value = os.environ.get(LNC_VARIABLE, "")
    if value.isascii() and value.isdigit() and int(value) in allowed:
        return int(value)
    return default
