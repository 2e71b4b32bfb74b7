#!/usr/bin/env python3
"""Uses only PyTorch/XLA names: --fix adds `import torch` for the replacements."""
import torch_xla
import torch_xla.core.xla_model as xm


def device():
    return xm.xla_device()


def sync(flush):
    if flush:
        torch_xla.sync()
    return xm.xrt_world_size()
