"""The device under test: availability, synchronisation, CPU-fallback tracking."""

from __future__ import annotations

import importlib
import importlib.util
import platform
import shlex
import sys
from importlib import metadata
from typing import Any

import torch

from .protocol import Fatal

COMPILE_BACKENDS = {"neuron": "neuron", "cpu": "aot_eager", "cuda": "inductor"}
DISTRIBUTED_BACKENDS = {"neuron": "neuron", "cpu": "gloo", "cuda": "nccl"}


class Device:
    """``neuron``, ``neuron:1``, ``cpu`` or ``cuda:0``, checked to exist when constructed."""

    def __init__(self, spec: str, compile_backend: str | None = None) -> None:
        self.spec = spec
        self.type, _, index = spec.partition(":")
        self.index = int(index) if index else None
        self.count = _check_available(self.type, self.index)
        self.torch_device = torch.device(spec)
        self.compile_backend = compile_backend or COMPILE_BACKENDS.get(self.type, "aot_eager")
        self._tracker = _fallback_tracker() if self.type == "neuron" else None

    @property
    def module(self) -> Any:
        """``torch.neuron`` / ``torch.cuda``; None for the CPU."""
        return getattr(torch, self.type, None) if self.type != "cpu" else None

    def synchronize(self) -> None:
        """Wait for queued work, so timings measure execution rather than launch."""
        module = self.module
        if module is not None and hasattr(module, "synchronize"):
            module.synchronize()

    def clear_tracking(self) -> None:
        if self._tracker is not None:
            self._tracker.clear_op_tracking()

    def fallback_ops(self) -> list[str] | None:
        """Ops that ran on the CPU since ``clear_tracking``; None when the device cannot tell."""
        if self._tracker is None:
            return None
        return sorted({str(op) for op in self._tracker.get_fallback_ops()})

    def describe(self) -> dict[str, Any]:
        return {
            "device": self.spec,
            "type": self.type,
            "available": True,
            "count": self.count,
            "name": _device_name(self),
            "accelerator": _accelerator(),
            "accelerator_count": _accelerator_count(),
            "fallback_tracking": self._tracker is not None,
            "compile_backend": self.compile_backend,
            **environment(),
        }


def environment() -> dict[str, Any]:
    """Interpreter and package versions (what was measured where)."""
    return {
        "python": platform.python_version(),
        "executable": sys.executable,
        "torch": torch.__version__,
        "torch_neuronx": _version("torch-neuronx"),
    }


def _version(distribution: str) -> str | None:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _check_available(kind: str, index: int | None) -> int:
    if kind == "cpu":
        return 1
    if kind == "neuron":
        count = _neuron_count()
    elif kind == "cuda":
        count = _cuda_count()
    else:
        raise Fatal("bad-request", f"unknown device type {kind!r}")
    if index is not None and index >= count:
        raise Fatal(
            "no-device",
            f"{kind}:{index} was requested but only {count} {kind} device(s) are visible.",
            f"Use --device {kind}:0 .. {kind}:{count - 1}.",
        )
    return count


def _neuron_count() -> int:
    if not hasattr(torch, "neuron"):
        _import_torch_neuronx()
    module = getattr(torch, "neuron", None)
    if module is None:
        raise Fatal(
            "no-device",
            f"torch {torch.__version__} has no 'neuron' device: torch-neuronx did not register "
            "one (another PrivateUse1 backend may have been loaded first).",
            "Check the environment with 'neuron-env doctor'.",
        )
    count = int(module.device_count()) if module.is_available() else 0
    if count == 0:
        raise Fatal(
            "no-device",
            f"torch-neuronx {_version('torch-neuronx')} is installed but sees no Neuron device "
            "(torch.neuron.is_available() is False).",
            "On a Trn2/Trn3 instance, check the driver and device files: 'neuron-ls', "
            "'lsmod | grep neuron', 'ls -l /dev/neuron*'. Elsewhere use --device cpu.",
        )
    return count


def _import_torch_neuronx() -> None:
    # Autoload imports torch_neuronx with torch unless TORCH_DEVICE_BACKEND_AUTOLOAD=0.
    if importlib.util.find_spec("torch_neuronx") is None:
        raise Fatal(
            "no-device",
            f"torch-neuronx is not installed in {sys.executable}, so torch "
            f"{torch.__version__} has no 'neuron' device.",
            f"Install it with '{_install_here()}', or test another device with --device cpu.",
        )
    try:
        importlib.import_module("torch_neuronx")
    except Exception as exc:
        raise Fatal("no-device", f"import torch_neuronx failed: {_first_line(exc)}") from None


def _install_here() -> str:
    """The install that adds torch-neuronx to this very environment, for the torch it has."""
    minor = ".".join(torch.__version__.split("+")[0].split(".")[:2])
    return shlex.join(["neuron-env", "install", "--torch", minor, "--venv", sys.prefix])


def _cuda_count() -> int:
    if not torch.cuda.is_available():
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise Fatal(
            "no-device",
            f"torch {torch.__version__} ({build}) sees no CUDA device.",
            "Check 'nvidia-smi' and that torch is a CUDA build.",
        )
    return int(torch.cuda.device_count())


def _fallback_tracker() -> Any:
    try:
        module = importlib.import_module("torch_neuronx")
    except Exception:
        return None
    needed = ("get_fallback_ops", "clear_op_tracking")
    return module if all(hasattr(module, name) for name in needed) else None


def _device_name(device: Device) -> str | None:
    module = device.module
    if device.type == "cpu":
        return platform.processor() or platform.machine()
    try:
        return str(module.get_device_name(device.index or 0))
    except Exception:
        return None


def _accelerator() -> str | None:
    accelerator = getattr(torch, "accelerator", None)
    try:
        current = accelerator.current_accelerator() if accelerator else None
    except Exception:
        return None
    return str(current) if current is not None else None


def _accelerator_count() -> int | None:
    accelerator = getattr(torch, "accelerator", None)
    try:
        return int(accelerator.device_count()) if accelerator else None
    except Exception:
        return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0]
