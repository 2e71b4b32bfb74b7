"""The boxed PrivateUse1 fallback: every ATen op of the fake device runs on the CPU.

* view ops (and ``as_strided``) run the CPU kernel on the neuron tensors themselves: those kernels
  only compute sizes and strides, so the result is a neuron view sharing the neuron storage;
* compute ops run on CPU aliases of their neuron arguments; in-place writes land in the neuron
  memory, new results are copied into new neuron tensors, ``out=`` tensors are resized as needed.
"""

from __future__ import annotations

import warnings
from typing import Any

import torch
from torch.utils._pytree import tree_map

from torch_neuronx import _faults
from torch_neuronx._storage import cpu_view, empty, resize, to_neuron

_CPU_KEYS = torch._C.DispatchKeySet(torch._C.DispatchKey.CPU)
_warned_float64 = False


def _is_neuron(x: object) -> bool:
    return isinstance(x, torch.Tensor) and x.device.type == "neuron"


def _unwrap(x: object) -> object:
    if _is_neuron(x):
        return cpu_view(x)  # type: ignore[arg-type]
    if isinstance(x, torch.device) and x.type == "neuron":
        return torch.device("cpu")
    return x


def _is_view(op: Any) -> bool:
    returns = op._schema.returns
    return bool(returns) and all(
        r.alias_info is not None and not r.alias_info.is_write for r in returns
    )


def fallback(op: Any, *args: Any, **kwargs: Any) -> Any:
    name = op._schema.name
    _faults.before(name)
    special = _SPECIAL.get(name)
    if special is not None:
        return special(*args, **kwargs)
    if _is_view(op):
        return op.redispatch(_CPU_KEYS, *args, **kwargs)
    return _compute(op, name, args, kwargs)


def _compute(op: Any, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    out_names = _out_arguments(op)
    cpu_args = tree_map(_unwrap, args)
    cpu_kwargs = {
        k: (torch.empty(0, dtype=v.dtype) if k in out_names else _unwrap_tree(v))
        for k, v in kwargs.items()
    }
    float64 = _uses_float64(args, kwargs)
    result = op(*cpu_args, **cpu_kwargs)
    for key in out_names:
        if key in kwargs:
            _store(kwargs[key], _finish(cpu_kwargs[key], name, float64))
    return _wrap(op, args, kwargs, result, name, float64)


def _unwrap_tree(value: Any) -> Any:
    return tree_map(_unwrap, value)


def _out_arguments(op: Any) -> set[str]:
    return {
        a.name
        for a in op._schema.arguments
        if a.kwarg_only and a.alias_info is not None and a.alias_info.is_write
    }


def _store(target: torch.Tensor, value: torch.Tensor) -> None:
    if tuple(target.shape) != tuple(value.shape):
        resize(target, list(value.shape))
    if value.numel():
        cpu_view(target).copy_(value)


def _uses_float64(args: Any, kwargs: Any) -> bool:
    flat, _ = torch.utils._pytree.tree_flatten((args, kwargs))
    return any(_is_neuron(x) and x.dtype == torch.float64 for x in flat)


def _wrap(op: Any, args: Any, kwargs: Any, result: Any, name: str, float64: bool) -> Any:
    returns = op._schema.returns
    if isinstance(result, list):  # Tensor[] returns
        return [_new(v, name, float64) for v in result]
    outputs = result if isinstance(result, tuple) else (result,)
    wrapped = []
    for schema_return, value in zip(returns, outputs, strict=False):
        alias = schema_return.alias_info
        if alias is not None and alias.is_write:
            wrapped.append(_aliased_argument(op, args, kwargs, alias))
        else:
            wrapped.append(_new(value, name, float64))
    if isinstance(result, tuple):
        return tuple(wrapped)
    return wrapped[0] if wrapped else None


def _new(value: Any, name: str, float64: bool) -> Any:
    if not isinstance(value, torch.Tensor):
        return value
    return to_neuron(_finish(value, name, float64))


def _finish(value: torch.Tensor, name: str, float64: bool) -> torch.Tensor:
    """A result as the (fake) device produces it: injected faults, float64 as float32."""
    value = _faults.corrupt(name, value)
    if float64 and value.dtype == torch.float64:
        value = _as_float32(value)
    return value


def _as_float32(value: torch.Tensor) -> torch.Tensor:
    """TorchNeuron (beta) computes float64 as float32 and says so; the fake does the same."""
    global _warned_float64
    if not _warned_float64:
        _warned_float64 = True
        warnings.warn(
            "float64 is not supported natively on Neuron; computing in float32", stacklevel=1
        )
    return value.float().double()


def _aliased_argument(op: Any, args: Any, kwargs: Any, alias: Any) -> Any:
    for position, argument in enumerate(op._schema.arguments):
        if argument.alias_info is not None and argument.alias_info.before_set == alias.before_set:
            if argument.kwarg_only or argument.name in kwargs:
                return kwargs[argument.name]
            return args[position]
    raise RuntimeError(f"fake neuron: cannot find the argument {op} returns")


def _copy_from(src: torch.Tensor, dst: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    source = cpu_view(src) if _is_neuron(src) else src
    if _is_neuron(dst) and dst.dtype == torch.float64:
        source = source.float()  # stored as float32 on the (fake) device
    target = cpu_view(dst) if _is_neuron(dst) else dst
    if target.numel():
        target.copy_(source)
    return dst


def _copy_from_and_resize(src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    if tuple(dst.shape) != tuple(src.shape):
        if _is_neuron(dst):
            resize(dst, list(src.shape))
        else:
            dst.resize_(src.shape)
    return _copy_from(src, dst)


def _resize(t: torch.Tensor, size: list[int], memory_format: Any = None) -> torch.Tensor:
    return resize(t, list(size))


def _empty(size: list[int], *args: Any, dtype: Any = None, **kwargs: Any) -> torch.Tensor:
    return empty(size, dtype or torch.get_default_dtype())


def _empty_strided(
    size: list[int], stride: list[int], dtype: Any = None, **kwargs: Any
) -> torch.Tensor:
    return empty(size, dtype or torch.get_default_dtype(), stride)


_SPECIAL = {
    "aten::_copy_from": _copy_from,
    "aten::_copy_from_and_resize": _copy_from_and_resize,
    "aten::resize_": _resize,
    "aten::empty": _empty,
    "aten::empty_strided": _empty_strided,
}


def convolution(*args: Any) -> Any:
    _faults.before("aten::convolution")
    result = torch.ops.aten.convolution.default(*tree_map(_unwrap, args))
    return to_neuron(_faults.corrupt("aten::convolution", result))


def convolution_backward(
    grad_output: Any,
    input: Any,
    weight: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    transposed: bool,
    output_padding: Any,
    groups: int,
    output_mask: list[bool],
) -> Any:
    _faults.before("aten::convolution_backward")
    bias_sizes = [weight.shape[0]] if output_mask[2] else None
    grads = torch.ops.aten.convolution_backward.default(
        cpu_view(grad_output),
        cpu_view(input),
        cpu_view(weight),
        bias_sizes,
        stride,
        padding,
        dilation,
        transposed,
        output_padding,
        groups,
        output_mask,
    )
    return tuple(to_neuron(g) if mask else None for g, mask in zip(grads, output_mask, strict=True))
