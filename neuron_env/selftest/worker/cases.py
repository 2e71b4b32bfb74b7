"""The self-test suite as data: every case, its inputs, dtypes, modes and tolerances.

This module is imported by neuron-env (``--list``, selection) *and* by the worker inside the target
interpreter, so it holds only standard-library data. The worker (``ops.py``) maps each case's
``op`` to a function; everything else about a case lives here, the way PyTorch's OpInfo keeps
sample shapes and per-dtype tolerances next to each operator instead of inside the tests.

A *variant* is one case at one dtype in one mode; its name is ``case/dtype/mode``, e.g.
``matmul/bf16/compile``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

LEVELS = ("quick", "standard", "long")
MODES = ("eager", "compile")
DTYPES = ("fp32", "bf16", "fp64")


@dataclass(frozen=True)
class Tolerance:
    """Element-wise ``|device - reference| <= atol * scale + rtol * |reference|``, where
    ``scale`` is the largest reference magnitude of the tensor (at least 1)."""

    rtol: float
    atol: float


@dataclass(frozen=True)
class Input:
    """One input tensor: ``normal`` (randn), ``positive`` (in [0.5, 1.5)), ``distinct`` (no ties,
    exact in bf16), ``index`` (int64 in [0, high)). ``grad``: differentiated in backward."""

    name: str
    shape: tuple[int, ...]
    kind: str = "normal"
    high: int = 0
    grad: bool = True


# Against a float64 CPU reference computed from the same (dtype-rounded) inputs. bf16 follows
# torch.testing's rtol with a looser atol (outputs are O(1)); fp32 allows for a device's own
# accumulation order and transcendental approximations (PyTorch compares CUDA to CPU at 1e-3).
POINTWISE = {"fp32": Tolerance(1e-5, 1e-5), "bf16": Tolerance(1.6e-2, 1e-2)}
NUMERIC = {"fp32": Tolerance(1e-4, 1e-4), "bf16": Tolerance(1.6e-2, 1e-2)}
ACCUMULATING = {"fp32": Tolerance(1e-3, 1e-3), "bf16": Tolerance(2e-2, 2e-2)}
EXACT = Tolerance(0.0, 0.0)


@dataclass(frozen=True)
class Case:
    """One self-test case. ``kind`` selects how the worker runs it:

    * ``op`` — ``op`` on ``inputs``, device vs CPU, forward and (``backward``) gradients;
    * ``training`` — optimizer steps on a small model, parameters vs CPU;
    * ``behaviour`` — a documented beta behaviour of TorchNeuron, checked and reported as such;
    * ``collective`` — torch.distributed across local processes;
    * ``perf`` — sustained throughput, repeated in rounds.
    """

    id: str
    summary: str
    op: str
    kind: str = "op"
    level: str = "quick"
    inputs: tuple[Input, ...] = ()
    dtypes: tuple[str, ...] = ("fp32", "bf16")
    modes: tuple[str, ...] = MODES
    backward: bool = True
    tolerances: dict[str, Tolerance] = field(default_factory=lambda: dict(NUMERIC))
    params: dict[str, Any] = field(default_factory=dict)

    def variants(self) -> list[str]:
        return [f"{self.id}/{dtype}/{mode}" for dtype in self.dtypes for mode in self.modes]


def _case(id: str, summary: str, *inputs: Input, **options: Any) -> Case:
    """A case whose worker function is named as the case (``op`` defaults to ``id``)."""
    return Case(id=id, summary=summary, op=options.pop("op", id), inputs=inputs, **options)


def _index(name: str, shape: tuple[int, ...], high: int) -> Input:
    """Integer indices in [0, ``high``): an input no gradient flows to."""
    return Input(name, shape, kind="index", high=high, grad=False)


def _compile_behaviour(id: str, summary: str, **params: Any) -> Case:
    """A documented behaviour of torch.compile, on one fp32 input."""
    return _case(
        id,
        summary,
        Input("x", (8, 32)),
        kind="behaviour",
        dtypes=("fp32",),
        modes=("compile",),
        params=params,
        tolerances={"fp32": POINTWISE["fp32"]},
    )


def _perf(
    id: str, summary: str, size: dict[str, Any], seconds: dict[str, float], **options: Any
) -> Case:
    """Sustained throughput (level ``long``): 5 rounds of about ``seconds`` each, per device type
    like ``size`` (``perf.py`` reads both)."""
    params = {**size, "rounds": 5, "seconds": seconds}
    return _case(id, summary, kind="perf", level="long", modes=("eager",), params=params, **options)


X = Input("x", (8, 64))
DISTINCT = Input("x", (8, 64), kind="distinct")
QKV = tuple(Input(name, (2, 4, 16, 32)) for name in "qkv")

CASES: tuple[Case, ...] = (
    _case("matmul", "a @ b", Input("a", (64, 128)), Input("b", (128, 32)), tolerances=ACCUMULATING),
    _case(
        "linear",
        "nn.functional.linear with bias",
        Input("x", (16, 64)),
        Input("weight", (32, 64)),
        Input("bias", (32,)),
        tolerances=ACCUMULATING,
    ),
    _case(
        "conv2d",
        "3x3 convolution, padding 1",
        Input("x", (2, 3, 16, 16)),
        Input("weight", (8, 3, 3, 3)),
        Input("bias", (8,)),
        tolerances=ACCUMULATING,
    ),
    _case("softmax", "softmax over the last dim", X),
    _case("layer_norm", "layer norm with affine", X, Input("weight", (64,)), Input("bias", (64,))),
    _case("rms_norm", "RMS norm with weight", X, Input("weight", (64,))),
    _case("gelu", "GELU (erf)", X),
    _case("silu", "SiLU", X),
    _case("sdpa", "scaled_dot_product_attention, causal", *QKV, tolerances=ACCUMULATING),
    _case(
        "embedding",
        "embedding lookup (grad to the table)",
        _index("indices", (4, 16), 100),
        Input("weight", (100, 32)),
    ),
    _case(
        "cross_entropy",
        "cross-entropy loss, mean over the batch",
        Input("logits", (16, 10)),
        _index("target", (16,), 10),
    ),
    _case("reductions", "sum, mean, amax, logsumexp", X),
    _case(
        "elementwise",
        "add, mul, div, tanh, exp, sqrt, where",
        Input("a", (8, 64)),
        Input("b", (8, 64)),
        Input("c", (8, 64), kind="positive"),
        tolerances=POINTWISE,
    ),
    _case("gather", "gather along dim 1", X, _index("index", (8, 16), 64)),
    _case(
        "scatter_add",
        "scatter_add along dim 1",
        X,
        _index("index", (8, 16), 64),
        Input("src", (8, 16)),
    ),
    _case("index", "index_select and advanced indexing", X, _index("index", (5,), 8)),
    _case("cumsum", "cumulative sum along dim 1", X),
    _case("sort", "sort along dim 1 (values and indices)", DISTINCT),
    _case("topk", "top-5 along dim 1 (values and indices)", DISTINCT),
    _case(
        "adamw_mlp",
        "5 AdamW steps on a 2-layer MLP; parameters vs CPU",
        kind="training",
        dtypes=("fp32",),
        # eps and lr keep each update a smooth function of the gradient, so rounding noise in a
        # near-zero gradient cannot flip a whole lr-sized step (Adam normalises by |grad|).
        params={
            "batch": 16,
            "inputs": 32,
            "hidden": 64,
            "outputs": 8,
            "steps": 5,
            "lr": 1e-2,
            "eps": 1e-3,
            "weight_decay": 1e-2,
        },
        tolerances={"fp32": Tolerance(1e-3, 1e-4)},
    ),
    _case(
        "float64",
        "float64 matmul: native, or computed as float32 (documented beta behaviour)",
        Input("a", (32, 64)),
        Input("b", (64, 16)),
        kind="behaviour",
        dtypes=("fp64",),
        modes=("eager",),
        # native float64 must match to float64 precision; float32 precision means "as float32"
        tolerances={"fp64": Tolerance(1e-10, 1e-10), "fp32": Tolerance(1e-4, 1e-4)},
    ),
    _compile_behaviour(
        "dynamic_shapes",
        "torch.compile(dynamic=True): accepted, or rejected (documented beta behaviour)",
    ),
    _compile_behaviour(
        "recompile",
        "a new input shape under dynamic=False compiles a new graph, still correct",
        second_shape=[12, 32],
    ),
    _case(
        "allreduce",
        "torch.distributed all-reduce (sum) over 2 local processes vs the exact sum",
        kind="collective",
        level="standard",
        dtypes=("fp32",),
        modes=("eager",),
        params={"world_size": 2, "numel": 65536, "repeats": 5},
        tolerances={"fp32": EXACT},
    ),
    _perf(
        "matmul_throughput",
        "sustained square matmul, TFLOP/s per round",
        {"n": {"neuron": 4096, "cuda": 8192, "cpu": 1024}},
        seconds={"neuron": 2.0, "cuda": 2.0, "cpu": 0.5},
        tolerances=dict(ACCUMULATING),
    ),
    _perf(
        "copy_bandwidth",
        "device-to-device copy, GB/s per round (read + write)",
        {"mib": {"neuron": 1024, "cuda": 1024, "cpu": 64}},
        seconds={"neuron": 1.0, "cuda": 1.0, "cpu": 0.25},
        dtypes=("fp32",),
        tolerances={"fp32": EXACT},
    ),
)

# The smoke test's own case: not part of any level.
SMOKE = Case(
    id="smoke",
    summary="a @ b, forward only: the smoke test's matmul",
    op="matmul",
    level="smoke",
    inputs=(Input("a", (256, 512)), Input("b", (512, 256))),
    modes=("eager",),
    backward=False,
    tolerances=ACCUMULATING,
)
SMOKE_VARIANTS = tuple(SMOKE.variants())


def case_by_id(case_id: str) -> Case:
    for case in (*CASES, SMOKE):
        if case.id == case_id:
            return case
    raise KeyError(case_id)


def split_variant(name: str) -> tuple[Case, str, str]:
    """``"matmul/bf16/eager"`` → (the matmul case, ``"bf16"``, ``"eager"``)."""
    case_id, dtype, mode = name.split("/")
    return case_by_id(case_id), dtype, mode


def variants_for(level: str, only: tuple[str, ...] = ()) -> list[str]:
    """The variants run at ``level`` (each level includes the ones before), filtered by ``only``.

    A pattern with ``*``, ``?`` or ``[`` is a glob over variant names; otherwise it names a case
    (``matmul``), a case and dtype (``matmul/bf16``) or one variant.
    """
    allowed = LEVELS[: LEVELS.index(level) + 1]
    names = [v for case in CASES if case.level in allowed for v in case.variants()]
    if not only:
        return names
    return [name for name in names if any(matches(name, pattern) for pattern in only)]


def matches(name: str, pattern: str) -> bool:
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(name, pattern)
    return name == pattern or name.startswith(pattern.rstrip("/") + "/")
