"""Where a value is a device, and where a value is only looked at.

Device positions: the first argument of the calls below, ``device=`` / ``device_type=``, and names
called ``device`` or ``*_device``. Roles: a value compared (``x.dtype == torch.float64``), used as
a dict key (``{torch.float64: 8}``) or passed to a call that makes its result on the CPU
(``torch.zeros(3, dtype=torch.float64, device="cpu")``) computes nothing on the Neuron device.
"""

from __future__ import annotations

import ast

# Calls whose first argument is a device (or a device type).
DEVICE_FIRST_ARG_CALLS = frozenset(
    {
        "torch.device",
        "torch.autocast",
        "torch.amp.autocast",
        "torch.set_default_device",
        "torch.distributed.device_mesh.DeviceMesh",
        "torch.distributed.device_mesh.init_device_mesh",
        "torch.distributed.init_device_mesh",
        "torch.distributed.tensor.DeviceMesh",
        "torch.distributed._tensor.DeviceMesh",
    }
)
# Where a value is only looked at, not computed with: `x.dtype == torch.float64`, a dict key
# `{torch.float64: ...}`, or an argument of a call that creates its result on the CPU.
COMPARED, KEY, ON_CPU = "compare", "key", "cpu"
DEVICE_KEYWORDS = frozenset({"device", "device_type"})


def is_device_target(node: ast.expr) -> bool:
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    lowered = name.lower()
    return lowered in DEVICE_KEYWORDS or lowered.endswith("_device")


def is_device_test(node: ast.expr) -> bool:
    """``t.device.type``, ``device``, ``device_map``, ``args.device``: what names a device."""
    name = node.id if isinstance(node, ast.Name) else getattr(node, "attr", "")
    if name == "type" and isinstance(node, ast.Attribute):
        return True
    return "device" in name.lower()


def is_cpu(node: ast.expr) -> bool:
    """``"cpu"`` or ``torch.device("cpu")`` (any name ending in ``device``)."""
    if isinstance(node, ast.Constant):
        return node.value == "cpu"
    if isinstance(node, ast.Call) and node.args and not node.keywords:
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        return name == "device" and is_cpu(node.args[0])
    return False


def creates_on_cpu(node: ast.expr) -> bool:
    """A call with ``device="cpu"``, or ``x.cpu()`` / ``x.to("cpu")``."""
    if not isinstance(node, ast.Call):
        return False
    if any(k.arg == "device" and is_cpu(k.value) for k in node.keywords):
        return True
    method = node.func.attr if isinstance(node.func, ast.Attribute) else ""
    return method == "cpu" or (method == "to" and bool(node.args) and is_cpu(node.args[0]))


# --- what reaches the device ----------------------------------------------------------------
# A float64 tensor costs precision only where it reaches the Neuron device: made there
# (`device=device`), moved there (`.to(device)`, `.cuda()`), or made anywhere once the default
# device or dtype is changed. CPU-side data loading, metrics and NumPy interop never are.

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
