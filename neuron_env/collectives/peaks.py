"""The link that busbw is compared with, per instance type (shared/reference/aws.md).

Across hosts it is the instance's EFA bandwidth; when every rank shares one host, the chip's
NeuronLink. nccl-tests' unit is GB/s (10^9 bytes), so Gbps are divided by 8.
"""

from __future__ import annotations

from neuron_env.collectives.models import Peak
from neuron_env.errors import BadInput

EFA_GBPS = {
    "trn2.48xlarge": 3200.0,  # EFAv3, trn2-arch.rst [CONFIRMED]
    "trn2u.48xlarge": 3200.0,  # same "16x 200 Gigabit" network as trn2.48xlarge
}
NEURONLINK_GBYTES = {
    "trn2.48xlarge": 1024.0,  # NeuronLink-v3, intra-instance, per chip [CONFIRMED]
    "trn2u.48xlarge": 1024.0,
}


def peak_for(instance_type: str | None, peak_gbps: float | None, one_host: bool) -> Peak | None:
    """``--peak-gbps`` as given, else the instance type's link, else None (not judged)."""
    if peak_gbps is not None:
        return Peak(peak_gbps / 8, f"the given peak ({peak_gbps:g} Gbps)")
    if instance_type is None:
        return None
    if instance_type not in EFA_GBPS:
        known = ", ".join(sorted(EFA_GBPS))
        raise BadInput(
            f"No link bandwidth is known for {instance_type}.",
            hint=f"Known: {known}. Pass --peak-gbps N to judge against your own figure.",
        )
    if one_host:
        gbytes = NEURONLINK_GBYTES[instance_type]
        return Peak(gbytes, f"{instance_type}'s NeuronLink ({gbytes:g} GB/s per chip)")
    gbps = EFA_GBPS[instance_type]
    return Peak(gbps / 8, f"{instance_type}'s EFA ({gbps:,.0f} Gbps)")
