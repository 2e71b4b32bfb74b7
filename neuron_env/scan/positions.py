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
