"""Nested inputs and outputs: move them between devices, flatten them into labelled tensors."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

import torch

DTYPE_NAMES = {
    torch.float32: "fp32",
    torch.bfloat16: "bf16",
    torch.float16: "fp16",
    torch.float64: "fp64",
}


def to_device(value: Any, device: Any) -> Any:
    """``value`` with every tensor in it (tuples, lists, dicts) moved to ``device``."""
    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, tuple | list):
        return type(value)(to_device(v, device) for v in value)
    if isinstance(value, Mapping):
        return {k: to_device(v, device) for k, v in value.items()}
    return value


def call(model: Any, inputs: tuple[Any, ...] | dict[str, Any]) -> Any:
    return model(**inputs) if isinstance(inputs, dict) else model(*inputs)


def flatten(value: Any, label: str = "output") -> list[tuple[str, Any]]:
    """Every tensor in ``value`` with its path: ``output``, ``output[0]``, ``output.logits``."""
    if isinstance(value, torch.Tensor):
        return [(label, value)]
    if isinstance(value, tuple | list):
        return [pair for i, v in enumerate(value) for pair in flatten(v, f"{label}[{i}]")]
    if isinstance(value, Mapping):
        return [pair for k, v in value.items() for pair in flatten(v, f"{label}.{k}")]
    return []


def dtype_name(dtype: Any) -> str:
    return DTYPE_NAMES.get(dtype, str(dtype).removeprefix("torch."))


def describe_inputs(model: Any, inputs: tuple[Any, ...] | dict[str, Any]) -> list[dict[str, Any]]:
    """Name, shape and dtype of each input tensor (named after the forward's parameters)."""
    named = inputs if isinstance(inputs, dict) else _bind(model, inputs)
    return [
        {"name": label, "shape": list(t.shape), "dtype": dtype_name(t.dtype)}
        for key, value in named.items()
        for label, t in flatten(value, key)
    ]


def _bind(model: Any, inputs: tuple[Any, ...]) -> dict[str, Any]:
    try:
        bound = inspect.signature(model.forward).bind(*inputs)
    except (TypeError, ValueError):
        return {f"input[{i}]": v for i, v in enumerate(inputs)}
    return dict(bound.arguments)
