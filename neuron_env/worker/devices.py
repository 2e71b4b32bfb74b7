"""What a worker run is given, checked before it starts: the device as the user names it, and a
timeout neuron-env can wait."""

from __future__ import annotations

import math

from neuron_env.errors import BadInput

DEVICE_TYPES = ("neuron", "cpu", "cuda")


def check_device(device: str) -> str:
    """``neuron``, ``neuron:1``, ``cpu``, ``cuda:0``; anything else is bad input (exit 2)."""
    kind, sep, index = device.partition(":")
    if (
        kind not in DEVICE_TYPES
        or (sep and not (index.isascii() and index.isdigit()))
        or (kind == "cpu" and sep)
    ):
        raise BadInput(
            f"Unknown device {device!r}.",
            hint="Use neuron (the default), neuron:N, cpu, cuda or cuda:N.",
        )
    return device


def check_timeout(seconds: float) -> float:
    """A finite, positive number of seconds; nan, inf, 0 or less is bad input (exit 2)."""
    if not (isinstance(seconds, int | float) and math.isfinite(seconds) and seconds > 0):
        raise BadInput(f"A timeout of {seconds!r} seconds cannot be waited for.",
                       hint="Give a finite number of seconds above 0.")  # fmt: skip
    return float(seconds)
