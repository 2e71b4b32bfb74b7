"""float64 that computes nothing on the device: dtype tests, lookup tables, CPU tensors."""

import torch

x = torch.ones(2)
if x.dtype is not torch.float64:
    pass
if x.dtype in (torch.float32, torch.float64):
    pass
BYTES = {torch.float64: 8, torch.float32: 4}
NAMES = {torch.double: "double"}
cpu_table = torch.zeros(3, dtype=torch.float64, device="cpu")
cpu_copy = torch.ones(3, device=torch.device("cpu")).double()
stats = x.cpu().double()
