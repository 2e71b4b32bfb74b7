#!/usr/bin/env python3
"""Uses only PyTorch/XLA names: --fix adds `import torch` for the replacements."""
import torch


def device():
    return torch.device("neuron")


def sync(flush):
    if flush:
        pass
    return (torch.distributed.get_world_size() if torch.distributed.is_initialized() else 1)
