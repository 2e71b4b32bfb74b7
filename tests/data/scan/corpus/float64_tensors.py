# float64 where it reaches the Neuron device: made there, moved there, or made the default.
import numpy as np
import torch
from torch import float64  # an import computes nothing

device = torch.device("neuron")
weights = torch.zeros(3, dtype=torch.float64, device=device)  # expect: float64
bias = torch.ones(3).double().to(device)  # expect: float64
torch.set_default_dtype(torch.double)  # expect: float64
other = torch.zeros(3, dtype=float64, device="neuron")  # expect: float64
moved = torch.zeros(3, dtype=float64)  # expect: float64
moved = moved.to(device)
model = torch.nn.Linear(3, 3)
model.double()  # expect: float64
model.to(device)
batch = torch.randn(2, 3).to(device, dtype=torch.float64)  # expect: float64
fine = np.zeros(3, dtype=np.float64)  # numpy's float64 is not a torch tensor
host = torch.zeros(3, dtype=torch.float64)  # stays on the CPU
