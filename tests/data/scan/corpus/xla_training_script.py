"""A PyTorch/XLA-era training script, as written for the legacy torch-neuronx (XLA) line.

Mentions of xm.mark_step() or XLA_USE_BF16 in this docstring are prose, not code.
"""

import os

import torch
import torch.nn as nn
import torch_xla.core.xla_model as xm  # expect: xla-import
import torch_xla.distributed.parallel_loader as pl  # expect: xla-import
import torch_xla.distributed.xla_multiprocessing as xmp  # expect: xla-import

os.environ["XLA_USE_BF16"] = "1"  # expect: xla-env
os.environ.setdefault("NEURON_CC_FLAGS", "--model-type transformer")


def train(index, flags):
    device = xm.xla_device()  # expect: xla-device
    model = nn.Linear(784, 10).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    loader = pl.MpDeviceLoader(make_loader(), device)  # expect: xla-api
    for step, (inputs, labels) in enumerate(loader):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(inputs), labels)
        loss.backward()
        xm.optimizer_step(optimizer)  # expect: xla-optimizer-step
        xm.mark_step()  # expect: xla-mark-step
        if step % 100 == 0:
            xm.master_print(f"step {step} loss {loss.item()}")  # expect: xla-api
    if xm.is_master_ordinal():  # expect: xla-api
        xm.save(model.state_dict(), "checkpoint.pt")  # expect: xla-api


def make_loader():
    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(8, 784)))


if __name__ == "__main__":
    # Launched as: neuron_parallel_compile torchrun --nproc_per_node=32 train.py
    xmp.spawn(train, args=({},))  # expect: xla-api
