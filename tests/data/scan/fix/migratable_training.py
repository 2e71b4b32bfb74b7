"""A single-host PyTorch/XLA training script that --fix migrates completely (no XLA left)."""

import os

import torch
import torch.distributed as dist
import torch_xla.core.xla_model as xm
import torch_xla.runtime as xr
from torch_xla.core.xla_model import mark_step

# Unrelated code and comments keep every byte:   tabs	and trailing spaces   
WIDTH = 16  # é


def setup():
    dist.init_process_group("xla", init_method="xla://")
    return xm.get_ordinal(), xr.world_size()


def train(steps: int) -> None:
    rank, world = setup()
    device = xm.xla_device()
    print(f"rank {rank}/{world} on {xm.xla_device()}")
    model = torch.compile(torch.nn.Linear(WIDTH, WIDTH).to(device), backend="openxla", dynamic=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        loss = model(torch.ones(WIDTH, device=device)).sum()
        loss.backward()
        optimizer.step()
        xm.mark_step()  # cut the graph
        if step % 10 == 0:
            xm.master_print(f"step {step}: {loss.item():.3f}")
        if loss.device.type == "xla":
            mark_step()
    xm.save(model.state_dict(), os.path.join("/tmp", "model.pt"))


if __name__ == "__main__":
    train(int(os.environ.get("STEPS", "3")))
