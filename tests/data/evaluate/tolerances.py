"""The CNN from its sibling file, with a looser tolerance for its output (sibling imports work as
under 'python tolerances.py')."""

import torch
from cnn import SmallCNN


def make():
    return {
        "model": SmallCNN(),
        "inputs": torch.randn(2, 3, 16, 16),
        "tolerances": {"output": (0.1, 0.1)},
    }
