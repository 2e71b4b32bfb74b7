# release: 2.33.0
import torch
import torchao  # expect: torchao
from torchao.prototype.mx_formats import MXLinearConfig  # expect: torchao

torchao.quantize_(torch.nn.Linear(32, 32), MXLinearConfig())  # expect: torchao, torchao
