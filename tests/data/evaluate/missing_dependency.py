"""An entry whose module imports a package the target does not have."""

import not_a_real_dependency  # noqa: F401
import torch


def make():
    return torch.nn.Linear(4, 4), torch.randn(2, 4)
