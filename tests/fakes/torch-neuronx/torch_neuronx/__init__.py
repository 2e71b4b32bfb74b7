"""A fake ``torch_neuronx`` for neuron-env's tests: a pure-Python ``neuron`` device on the CPU.

Installed as a distribution named ``torch-neuronx`` with the same ``torch.backends`` entry point
as the real package, so a plain ``import torch`` loads it. See ``_faults`` for fault injection.
"""

from __future__ import annotations

__version__ = "2.13.3.0+fake"

_loaded = False


def _autoload() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    import torch
    from torch.utils.backend_registration import _setup_privateuseone_for_python_backend

    from torch_neuronx import _device, _dispatch, _faults

    _faults.hang_at_load()

    _setup_privateuseone_for_python_backend(
        "neuron", backend_module=_device.NeuronModule(), hook=_device.Hook()
    )
    global _library, _kernels
    _library = torch.library.Library("_", "IMPL")
    _library.fallback(_dispatch.fallback, dispatch_key="PrivateUse1")
    # Convolution reaches an unknown backend as *_overrideable, which has no fallback path.
    _kernels = torch.library.Library("aten", "IMPL")
    _kernels.impl("convolution_overrideable", _dispatch.convolution, "PrivateUse1")
    _kernels.impl(
        "convolution_backward_overrideable", _dispatch.convolution_backward, "PrivateUse1"
    )
    from torch_neuronx import _distributed

    _distributed.register()


def get_fallback_ops() -> list[str]:
    """Ops that ran on the CPU instead of the device since the last clear_op_tracking()."""
    from torch_neuronx import _faults

    return list(_faults.FELL_BACK)


def get_executed_ops() -> list[str]:
    """Ops executed since the last clear_op_tracking()."""
    from torch_neuronx import _faults

    return list(_faults.EXECUTED)


def clear_op_tracking() -> None:
    """Forget the ops recorded so far."""
    from torch_neuronx import _faults

    _faults.EXECUTED.clear()
    _faults.FELL_BACK.clear()


_autoload()
