"""What each ``op`` of the case table computes, and how its inputs are made.

Every function takes the inputs (a dict of tensors, on the device or on the CPU) and returns one
tensor or a tuple; the runner calls it once on the device and once on the float64 CPU reference.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from .cases import Input

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp64": torch.float64}


def make_inputs(specs: tuple[Input, ...], dtype: Any, seed_text: str) -> dict[str, Any]:
    """CPU inputs, the same on every run of the same variant (seeded by its name)."""
    generator = torch.Generator().manual_seed(zlib.crc32(seed_text.encode()))
    return {spec.name: _make(spec, dtype, generator) for spec in specs}


def _make(spec: Input, dtype: Any, generator: Any) -> Any:
    if spec.kind == "index":
        return torch.randint(0, spec.high, spec.shape, generator=generator)
    if spec.kind == "positive":
        return (torch.rand(spec.shape, generator=generator) + 0.5).to(dtype)
    if spec.kind == "distinct":
        # Multiples of 1/8 with |k| <= 256 are exact in bf16: no ties, identical order anywhere.
        count = 1
        for size in spec.shape:
            count *= size
        values = (torch.randperm(count, generator=generator) - count // 2).float() / 8
        return values.reshape(spec.shape).to(dtype)
    # Drawn in float64 so that float64 cases get full-precision inputs.
    return torch.randn(spec.shape, generator=generator, dtype=torch.float64).to(dtype)


def _reductions(x: Any) -> tuple[Any, ...]:
    return x.sum(dim=1), x.mean(dim=0), x.amax(dim=1), torch.logsumexp(x, dim=1)


def _elementwise(a: Any, b: Any, c: Any) -> tuple[Any, ...]:
    return a + b * c, a / c, torch.tanh(a), torch.exp(b), torch.sqrt(c), torch.where(a > 0, a, b)


def _index(x: Any, index: Any) -> tuple[Any, ...]:
    return torch.index_select(x, 0, index), x[index]


def _rms_norm(x: Any, weight: Any) -> Any:
    if hasattr(F, "rms_norm"):
        return F.rms_norm(x, (x.shape[-1],), weight)
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * weight  # torch < 2.4


OPS: dict[str, Callable[..., Any]] = {
    "matmul": lambda a, b: a @ b,
    "linear": lambda x, weight, bias: F.linear(x, weight, bias),
    "conv2d": lambda x, weight, bias: F.conv2d(x, weight, bias, padding=1),
    "softmax": lambda x: torch.softmax(x, dim=-1),
    "layer_norm": lambda x, weight, bias: F.layer_norm(x, (x.shape[-1],), weight, bias),
    "rms_norm": _rms_norm,
    "gelu": lambda x: F.gelu(x),
    "silu": lambda x: F.silu(x),
    "sdpa": lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
    "embedding": lambda indices, weight: F.embedding(indices, weight),
    "cross_entropy": lambda logits, target: F.cross_entropy(logits, target),
    "reductions": _reductions,
    "elementwise": _elementwise,
    "gather": lambda x, index: torch.gather(x, 1, index),
    "scatter_add": lambda x, index, src: x.scatter_add(1, index, src),
    "index": _index,
    "cumsum": lambda x: torch.cumsum(x, dim=1),
    "sort": lambda x: tuple(torch.sort(x, dim=1)),
    "topk": lambda x: tuple(torch.topk(x, 5, dim=1)),
}


def as_tuple(outputs: Any) -> tuple[Any, ...]:
    return outputs if isinstance(outputs, tuple) else (outputs,)
