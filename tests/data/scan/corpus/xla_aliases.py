# Every way a script may name PyTorch/XLA: aliases, from-imports, the newer torch_xla API.
import torch
import torch_xla  # expect: xla-import
from torch_xla.core import xla_model as xmod  # expect: xla-import
from torch_xla.core.xla_model import mark_step, xla_device  # expect: xla-import, xla-import

try:
    import torch_xla.runtime as xr  # expect: xla-import
except ImportError:  # the fallback must not hide the real module
    xr = None

a = xla_device()  # expect: xla-device
b = xmod.xla_device()  # expect: xla-device
c = torch_xla.core.xla_model.xla_device()  # expect: xla-device
d = torch_xla.device()  # expect: xla-device
e = xmod.xla_device(n=1)  # expect: xla-device
mark_step()  # expect: xla-mark-step
torch_xla.sync()  # expect: xla-mark-step
world = xr.world_size()  # expect: xla-api
t = torch.ones(2).to("xla")  # expect: xla-device-string
u = torch.ones(2).to('xla:1')  # expect: xla-device-string
v = torch.ones(2, device=torch.device("xla"))  # expect: xla-device-string


def step():
    xmod.mark_step()  # expect: xla-mark-step
