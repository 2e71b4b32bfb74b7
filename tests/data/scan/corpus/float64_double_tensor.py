# float64 through the legacy tensor types.
import torch

x = torch.DoubleTensor([1.0, 2.0])  # expect: float64
y = torch.ones(2).type(torch.DoubleTensor)  # expect: float64
z = torch.FloatTensor([1.0])
