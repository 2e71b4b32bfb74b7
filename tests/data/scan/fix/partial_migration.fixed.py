"""What --fix must not rewrite (it changes behaviour): the finding says what to do instead."""
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp


def _mp_fn(index, loader):
    device = torch.device("neuron")
    model = torch.nn.Linear(4, 4).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for inputs in pl.MpDeviceLoader(loader, device):
        model(inputs).sum().backward()
        xm.optimizer_step(optimizer)
        xm.mark_step(); print("step")  # shares its line: left to a person


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=([],))
