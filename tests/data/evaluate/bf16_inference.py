"""A bfloat16 model compared on its forward only, returning a dict of outputs (like HF models)."""

import torch
from torch import nn


class Classifier(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.Linear(32, 64), nn.GELU(), nn.Linear(64, 8))

    def forward(self, features: torch.Tensor) -> dict[str, torch.Tensor]:
        logits = self.body(features)
        return {"logits": logits, "label": logits.argmax(-1)}


def make():
    model = Classifier().to(torch.bfloat16).eval()
    return {"model": model, "inputs": torch.randn(4, 32, dtype=torch.bfloat16), "backward": False}
