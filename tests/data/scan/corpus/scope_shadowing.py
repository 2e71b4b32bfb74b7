# How Python scopes decide what a name refers to.
import torch
from torch import sparse  # expect: unsupported-apis

sparse.mm(1, 2)  # expect: unsupported-apis


def uses_module_level_name():
    return sparse.sum(1)  # expect: unsupported-apis


def shadows_with_a_parameter(sparse):
    return sparse.sum(1)


def shadows_with_an_assignment():
    sparse = object()
    return sparse.sum(1)


def declares_global():
    global sparse
    return sparse.sum(1)  # expect: unsupported-apis


def imports_inside():
    import torch_xla.core.xla_model as xm  # expect: xla-import

    xm.mark_step()  # expect: xla-mark-step


def outer():
    from torch import nested  # expect: unsupported-apis

    def inner():
        return nested.nested_tensor([])  # expect: unsupported-apis

    return inner


from torch import distributions  # expect: unsupported-apis

distributions = None  # rebound at the top level: functions see this when they run


def after_rebinding():
    return distributions.Normal(0, 1)
