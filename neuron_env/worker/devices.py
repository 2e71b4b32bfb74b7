"""The devices a worker can run on, as the user names them."""

from __future__ import annotations

from neuron_env.errors import BadInput

DEVICE_TYPES = ("neuron", "cpu", "cuda")


def check_device(device: str) -> str:
    """``neuron``, ``neuron:1``, ``cpu``, ``cuda:0``; anything else is bad input (exit 2)."""
    kind, sep, index = device.partition(":")
    if kind not in DEVICE_TYPES or (sep and not index.isdigit()) or (kind == "cpu" and sep):
        raise BadInput(
            f"Unknown device {device!r}.",
            hint="Use neuron (the default), neuron:N, cpu, cuda or cuda:N.",
        )
    return device
