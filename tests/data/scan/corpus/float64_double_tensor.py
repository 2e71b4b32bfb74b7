# float64 through the legacy tensor types, moved to the device.
import torch

x = torch.DoubleTensor([1.0, 2.0]).to("neuron")  # expect: float64
y = torch.ones(2).type(torch.DoubleTensor)  # expect: float64
y = y.cuda()  # expect: cuda-method
z = torch.FloatTensor([1.0]).to("neuron")
w = torch.DoubleTensor([3.0])  # stays on the CPU
