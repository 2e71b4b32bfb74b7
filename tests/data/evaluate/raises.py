"""An entry that raises while building its inputs."""

import torch


def load_weights(path: str) -> None:
    raise FileNotFoundError(f"no checkpoint at {path}")


def make():
    model = torch.nn.Linear(4, 4)
    load_weights("/nonexistent/checkpoint.pt")
    return model, torch.randn(2, 4)
