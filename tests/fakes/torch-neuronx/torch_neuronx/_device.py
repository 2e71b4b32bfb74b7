"""``torch.neuron`` (the device module) and the PrivateUse1 hooks of the fake device."""

from __future__ import annotations

import torch

from torch_neuronx import _faults


class NeuronModule:
    """What ``torch.neuron`` offers in the fake: availability, count, synchronize."""

    def is_available(self) -> bool:
        return self.device_count() > 0

    def device_count(self) -> int:
        return 0 if _faults.no_device() else 2

    def is_initialized(self) -> bool:
        return True

    def current_device(self) -> int:
        return 0

    def set_device(self, device: object) -> None:
        pass

    def synchronize(self, device: object = None) -> None:
        pass

    def get_device_name(self, device: object = None) -> str:
        return "Fake NeuronCore (CPU)"

    def _is_in_bad_fork(self) -> bool:
        return False

    def manual_seed_all(self, seed: int) -> None:
        pass


class Hook(torch._C._acc.PrivateUse1Hooks):  # type: ignore[misc]
    def is_available(self) -> bool:
        return not _faults.no_device()

    def has_primary_context(self, dev_id: int) -> bool:
        return True

    def is_built(self) -> bool:
        return True
