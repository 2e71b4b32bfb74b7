# torch.compile and dynamo with the backends PyTorch/XLA registers.
import torch
import torch._dynamo as dynamo

model = torch.nn.Linear(4, 4)
a = torch.compile(model, backend="openxla", dynamic=False)  # expect: xla-compile-backend
b = torch.compile(model, backend="openxla_eval", dynamic=False)  # expect: xla-compile-backend
c = torch._dynamo.optimize("openxla")(model)  # expect: xla-compile-backend
d = dynamo.optimize(backend="aot_torchxla_trace_once")(model)  # expect: xla-compile-backend
e = torch.compile(model, backend="neuron", dynamic=False)
f = dynamo.optimize("eager")(model)
