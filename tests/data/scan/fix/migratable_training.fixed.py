"""A single-host PyTorch/XLA training script that --fix migrates completely (no XLA left)."""

import os

import torch
import torch.distributed as dist

# Unrelated code and comments keep every byte:   tabs	and trailing spaces   
WIDTH = 16  # é


def setup():
    dist.init_process_group("neuron", init_method="env://")
    return (dist.get_rank() if dist.is_initialized() else 0), (dist.get_world_size() if dist.is_initialized() else 1)


def train(steps: int) -> None:
    rank, world = setup()
    device = torch.device("neuron")
    print(f"rank {rank}/{world} on {torch.device('neuron')}")
    model = torch.compile(torch.nn.Linear(WIDTH, WIDTH).to(device), backend="neuron", dynamic=False)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step in range(steps):
        optimizer.zero_grad()
        loss = model(torch.ones(WIDTH, device=device)).sum()
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            if not dist.is_initialized() or dist.get_rank() == 0:
                print(f"step {step}: {loss.item():.3f}")
        if loss.device.type == "neuron":
            pass
    if not dist.is_initialized() or dist.get_rank() == 0:
        torch.save(model.state_dict(), os.path.join("/tmp", "model.pt"))


if __name__ == "__main__":
    train(int(os.environ.get("STEPS", "3")))
