import numpy as np
import torch
from torch import float64  # expect: float64

weights = torch.zeros(3, dtype=torch.float64)  # expect: float64
bias = torch.ones(3).double()  # expect: float64
torch.set_default_dtype(torch.double)  # expect: float64
other = torch.zeros(3, dtype=float64)  # expect: float64
fine = np.zeros(3, dtype=np.float64)  # numpy's float64 is not a torch tensor
