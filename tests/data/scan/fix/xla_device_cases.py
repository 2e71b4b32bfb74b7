"""PyTorch/XLA device code written the way people write it: --fix must keep all of this."""
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()  # the accelerator — comments and non-ASCII text stay: é
model = torch.nn.Linear(4,4).to( "xla" )   # odd spacing stays
other  =  torch.zeros(2, device='xla:1')
raw = torch.ones(1).to(r"xla")
nested = {"a": [xm.xla_device(),
                xm.xla_device()]}

# Not fixable: an argument, and a device that is not one plain string literal.
numbered = xm.xla_device(1)
joined = torch.ones(1).to("x" "la")
print("xla")
