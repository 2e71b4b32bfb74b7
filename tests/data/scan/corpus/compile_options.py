import torch
from torch import compile as tcompile

model = torch.nn.Linear(4, 4)
options = {"dynamic": False}

a = torch.compile(model, dynamic=False, backend="neuron")
b = torch.compile(model, dynamic=True)  # expect: compile-backend, compile-dynamic-shapes
c = torch.compile(model)  # expect: compile-backend, compile-dynamic-shapes
d = torch.compile(model, dynamic=None)  # expect: compile-backend, compile-dynamic-shapes
e = tcompile(model, dynamic=False, mode="reduce-overhead")  # expect: compile-backend, compile-mode
f = torch.compile(model, dynamic=False, mode="default")  # expect: compile-backend
g = torch.compile(model, **options)  # **options may say anything: not reported
h = torch.compile(  # expect: compile-backend, compile-dynamic-shapes
    model,
    mode="max-autotune",  # expect: compile-mode
)


@torch.compile  # expect: compile-backend, compile-dynamic-shapes
def step(x):
    return x * 2


@torch.compile(dynamic=False, fullgraph=True)  # expect: compile-backend
def step2(x):
    return x * 2
