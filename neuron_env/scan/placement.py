"""Where a float64 tensor lives: on the Neuron device, or on the CPU.

A float64 tensor costs precision only where it reaches the device. What is known from one module:

* made on a device (``device=device``), moved there (``.to(device)``, ``.cuda()``, in the same
  statement or by a name moved elsewhere in the module), or made anywhere after
  ``torch.set_default_device("neuron")`` or ``torch.set_default_dtype(torch.double)``: device;
* made by a factory (``torch.zeros``, ``torch.tensor``, ``torch.from_numpy``, ...) with no
  device and never moved: CPU, as PyTorch's factories make tensors on the CPU;
* in data loading (a ``Dataset`` class, ``__getitem__``, a collate function) or next to NumPy
  interop and host reads (``.cpu()``, ``.numpy()``, ``.item()``, ``.tolist()``,
  ``torch.from_numpy``): CPU;
* a conversion of a tensor made elsewhere (``hidden.to(torch.double)``, ``logits.double()``,
  ``softmax(x, dtype=torch.float64)``) in model or optimizer code: device, which is where a
  TorchNeuron model's tensors are.
"""

from __future__ import annotations

import ast

from neuron_env.scan.positions import is_cpu

_DEFAULT_SETTERS = frozenset({"set_default_dtype", "set_default_tensor_type"})


def is_device_value(node: ast.expr) -> bool:
    """A device other than the CPU: ``"neuron"``, ``"xla:1"``, ``device``, ``args.device``,
    ``torch.device("neuron")``, ``xm.xla_device()`` (a dtype such as ``torch.float64`` is not)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and node.value.split(":")[0] in _DEVICE_TYPES
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        return name.lower().endswith("device") and not is_cpu(node)
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    return "device" in name.lower()


_DEVICE_TYPES = frozenset({"neuron", "xla", "cuda", "privateuseone"})


def places_on_device(statement: ast.stmt) -> bool:
    """The statement makes or moves a tensor on a device, or changes the default dtype."""
    simple = ast.Assign | ast.AugAssign | ast.AnnAssign | ast.Expr | ast.Return
    if not isinstance(statement, simple):
        return False
    return any(_places(node) for node in ast.walk(statement) if isinstance(node, ast.Call))


def _places(call: ast.Call) -> bool:
    device = next((k.value for k in call.keywords if k.arg == "device"), None)
    if device is not None and is_device_value(device):
        return True
    method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
    if method == "to" and call.args and is_device_value(call.args[0]):
        return True
    return method == "cuda" or method in _DEFAULT_SETTERS


def moved_name(call: ast.Call) -> str | None:
    """``x`` in ``x.to(device)`` or ``x.cuda()``: a tensor or module moved to a device."""
    func = call.func
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return None
    to_device = func.attr == "to" and (
        (call.args and is_device_value(call.args[0]))
        or any(k.arg == "device" and is_device_value(k.value) for k in call.keywords)
    )
    return func.value.id if to_device or func.attr == "cuda" else None


def statement_names(statement: ast.stmt) -> set[str]:
    """The names a statement binds or converts in place: ``x = ...``, ``model.double()``."""
    targets: list[ast.expr] = []
    if isinstance(statement, ast.Assign):
        targets = list(statement.targets)
    elif isinstance(statement, ast.AugAssign | ast.AnnAssign):
        targets = [statement.target]
    elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        targets = [func.value] if isinstance(func, ast.Attribute) else []
    names: set[str] = set()
    for target in targets:
        names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
    return names


# PyTorch's factories: without device= they make their tensor on the CPU.
FACTORIES = frozenset(
    f"torch.{name}"
    for name in (
        "zeros", "ones", "empty", "full", "tensor", "as_tensor", "from_numpy", "arange",
        "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm", "DoubleTensor",
    )
)  # fmt: skip
_HOST_READS = frozenset({"cpu", "numpy", "tolist", "item", "from_numpy"})
_HOST_FUNCTIONS = frozenset({"__getitem__", "__iter__", "__next__", "__len__", "collate_fn"})


def makes_on_host(call: ast.Call, factories: set[int]) -> bool:
    """A factory call with no device (``torch.zeros(3)``), or a method called on one
    (``torch.ones(3).double()``): its result is on the CPU."""
    if id(call) in factories:
        return not any(k.arg == "device" and not is_cpu(k.value) for k in call.keywords)
    func = call.func
    return (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Call)
        and makes_on_host(func.value, factories)
    )


def shows_host(statement: ast.stmt) -> bool:
    """The statement reads tensors back to the host or works with NumPy."""
    for node in ast.walk(statement):
        if isinstance(node, ast.Call):
            name = getattr(node.func, "attr", getattr(node.func, "id", ""))
            if name in _HOST_READS:
                return True
    return False


def host_statements(tree: ast.Module) -> set[int]:
    """The statements of data loading: in ``Dataset`` classes, ``__getitem__`` and the like,
    and collate functions (ids of the statement nodes)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        host = (isinstance(node, ast.ClassDef) and any(_names_dataset(b) for b in node.bases)) or (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and (node.name in _HOST_FUNCTIONS or "collate" in node.name)
        )
        if host:
            found.update(id(n) for n in ast.walk(node) if isinstance(n, ast.stmt))
    return found


def _names_dataset(base: ast.expr) -> bool:
    name = base.attr if isinstance(base, ast.Attribute) else getattr(base, "id", "")
    return name.endswith("Dataset")
