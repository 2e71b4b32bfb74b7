"""Code that only looks like what scan reports: none of it may be reported.

xm.mark_step(), torch.sparse.mm, XLA_USE_BF16, .to("xla") and neuron_parallel_compile in a
docstring are prose.
"""

import re

import numpy as np
import torch
import xm  # a user module that happens to be called xm

from mylib import sparse as sp  # a user module called sparse

sparse = {"rows": [0, 1], "cols": [1, 0]}  # a local variable called sparse
sparse.get("rows")
sp.mm(1, 2)
xm.mark_step()
xm.xla_device()
pattern = re.compile(r"\d+")  # re.compile is not torch.compile
model = torch.nn.Linear(2, 2)
model.compile()  # nn.Module.compile: its options are not visible here
half = np.float64(1.0)
print("xla", "cuda")  # strings outside device positions
backend = "nccl"
label = {"name": "cuda"}
# torch_xla.core.xla_model.xla_device() in a comment
name = "torch_xla"


def run(xm, sparse, fft):
    xm.mark_step()
    sparse.mm(1)
    return fft.rfft(1)


def xla_device():
    return "cpu"


class Loader:
    sparse = True

    def mm(self):
        return self.sparse


results = [sparse for sparse in range(3)]
handler = lambda sparse: sparse.mm(1)  # noqa: E731
dev = xla_device()
tensor = torch.ones(2).to(dev)
