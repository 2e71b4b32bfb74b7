"""A model whose forward reads a tensor's value in Python: torch.compile breaks the graph there."""

import torch
from torch import nn


class Gated(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = nn.Linear(8, 8)
        self.second = nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.first(x)
        scale = float(h.abs().mean().item())
        return self.second(h * scale)


def make():
    return Gated(), torch.randn(4, 8)
