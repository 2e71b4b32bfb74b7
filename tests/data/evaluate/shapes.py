"""A sequence model with inputs_for(shape) and default shapes: what --shapes needs."""

import torch
from torch import nn


class Tagger(nn.Module):
    def __init__(self, width: int = 16, tags: int = 4) -> None:
        super().__init__()
        self.mix = nn.Linear(width, width)
        self.out = nn.Linear(width, tags)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(torch.tanh(self.mix(x)))


def inputs_for(shape):
    batch, length = shape
    return torch.randn(batch, length, 16)


def make():
    return {
        "model": Tagger(),
        "inputs": inputs_for((2, 8)),
        "inputs_for": inputs_for,
        "shapes": [(2, 8), (2, 16), (4, 16)],
    }
