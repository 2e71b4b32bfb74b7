"""What torch.compile did with the model: graphs compiled, graph breaks, and, when the backend
rejected a graph, which of its ops it rejects on their own."""

from __future__ import annotations

import contextlib
import operator
import time
from collections.abc import Iterator
from typing import Any

import torch

from ...worker.target.errors import innermost_message

MAX_REASON = 300


class GraphRecorder:
    """A torch.compile backend around the real one: counts the graphs it is given and keeps the
    one it failed on."""

    def __init__(self, backend: str) -> None:
        from torch._dynamo.backends.registry import lookup_backend

        self.inner = lookup_backend(backend)
        self.graphs = 0
        self.failed: Any = None

    def __call__(self, gm: Any, example_inputs: Any) -> Any:
        self.graphs += 1
        try:
            return self.inner(gm, example_inputs)
        except Exception:
            self.failed = gm
            raise


def reset() -> None:
    """Forget compiled graphs and dynamo's counters, so the next call compiles (and is timed)."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()


def graph_breaks() -> list[dict[str, Any]]:
    """Dynamo's graph-break reasons since :func:`reset`, with how often each happened."""
    from torch._dynamo.utils import counters

    found = [(_short_reason(reason), n) for reason, n in counters["graph_break"].items()]
    return [{"reason": reason, "count": n} for reason, n in sorted(found, key=lambda x: -x[1])]


def _short_reason(reason: str) -> str:
    lines = [line.strip() for line in str(reason).splitlines() if line.strip()]
    if not lines:
        return "(no reason given)"
    explained = next((line for line in lines if line.startswith("Explanation:")), "")
    text = lines[0] + (" — " + explained.removeprefix("Explanation:").strip() if explained else "")
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"


@contextlib.contextmanager
def recompile_limit(at_least: int) -> Iterator[None]:
    """Let dynamo compile one graph per shape (past its limit it silently runs eagerly)."""
    config = torch._dynamo.config
    names = [n for n in ("recompile_limit", "cache_size_limit") if hasattr(config, n)]
    changes = {n: max(getattr(config, n), at_least) for n in names[:1]}
    if hasattr(config, "accumulated_recompile_limit"):
        changes["accumulated_recompile_limit"] = max(config.accumulated_recompile_limit, at_least)
    with config.patch(changes):
        yield


def failing_ops(gm: Any, backend: Any, deadline: float) -> tuple[list[dict[str, str]], bool]:
    """Compile each distinct op of the rejected graph on its own with ``backend``; the ones that
    fail, with the backend's message. The bool says whether every op was tried before
    ``deadline`` (each attempt is a real compilation and may take a while)."""
    failed: list[dict[str, str]] = []
    tried: set[str] = set()
    for node in gm.graph.nodes:
        name = op_name(gm, node)
        if name is None or name in tried:
            continue
        if time.monotonic() > deadline:
            return failed, False
        tried.add(name)
        error = _compile_alone(gm, node, backend)
        if error is not None:
            failed.append({"op": name, "error": error})
    return failed, True


def op_name(gm: Any, node: Any) -> str | None:
    """``torch._C._nn.gelu``, ``Tensor.sum``, ``Linear``; None for what is not an op."""
    from torch.fx.node import _get_qualified_name

    if node.op == "call_function" and node.target is not operator.getitem:
        return str(_get_qualified_name(node.target))
    if node.op == "call_method":
        return f"Tensor.{node.target}"
    if node.op == "call_module":
        return type(gm.get_submodule(node.target)).__name__
    return None


class _NoExample(Exception):
    """An argument without a usable example value: the op cannot be tried alone."""


def _compile_alone(gm: Any, node: Any, backend: Any) -> str | None:
    try:
        single, values = _single_op(gm, node)
    except _NoExample:
        return None
    try:
        torch.compile(single, backend=backend, dynamic=False)(*values)
    except Exception as exc:
        return innermost_message(exc)
    return None


def _single_op(gm: Any, node: Any) -> tuple[Any, list[Any]]:
    """A graph of ``node`` alone, its arguments as inputs, and real tensors shaped like theirs."""
    graph = torch.fx.Graph()
    placeholders: dict[Any, Any] = {}
    values: list[Any] = []

    def as_input(argument: Any) -> Any:
        if argument not in placeholders:
            placeholders[argument] = graph.placeholder(f"input_{len(placeholders)}")
            values.append(_real(argument.meta.get("example_value")))
        return placeholders[argument]

    args = torch.fx.node.map_arg(node.args, as_input)
    kwargs = torch.fx.node.map_arg(node.kwargs, as_input)
    graph.output(graph.create_node(node.op, node.target, args, kwargs))
    return torch.fx.GraphModule(gm, graph), values


def _real(example: Any) -> Any:
    if isinstance(example, torch.Tensor):
        shape, dtype = tuple(int(n) for n in example.shape), example.dtype
        made = torch.randn(shape) if dtype.is_floating_point else torch.zeros(shape)
        return made.to(dtype).to(example.device)
    if isinstance(example, tuple | list):
        return type(example)(_real(v) for v in example)
    if isinstance(example, int | float | bool):
        return example
    raise _NoExample
