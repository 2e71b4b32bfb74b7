"""A classifier for training: an object with a loss function and targets."""

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


@dataclass
class Training:
    model: nn.Module
    inputs: Any
    targets: Any
    loss_fn: Any
    name: str = "mlp-classifier"


def cross_entropy(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(logits, labels)


def make():
    model = nn.Sequential(nn.Linear(20, 64), nn.SiLU(), nn.LayerNorm(64), nn.Linear(64, 5))
    labels = torch.randint(0, 5, (16,))
    return Training(model, torch.randn(16, 20), labels, cross_entropy)
