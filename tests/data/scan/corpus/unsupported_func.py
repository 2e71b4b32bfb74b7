import torch
from torch.func import grad, vmap  # expect: unsupported-apis, unsupported-apis


def loss(x):
    return (x**2).sum()


g = grad(loss)(torch.ones(3))  # expect: unsupported-apis
batched = vmap(loss)(torch.ones(2, 3))  # expect: unsupported-apis
jac = torch.func.jacrev(loss)(torch.ones(3))  # expect: unsupported-apis
