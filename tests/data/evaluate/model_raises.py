"""An entry whose inputs do not fit the model: the forward raises on the CPU."""

import torch


class Projection(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear(x)


def make():
    return Projection(), torch.randn(2, 5)
