"""The self-test case table: consistent data, a worker needing only stdlib and torch, selection."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

from neuron_env.errors import BadInput
from neuron_env.selftest import CASES, LEVELS, check_device, select_variants
from neuron_env.selftest.worker.cases import SMOKE, matches, variants_for

WORKER = Path(__file__).resolve().parents[2] / "neuron_env" / "selftest" / "worker"


def _dict_keys(path: Path, name: str) -> set[str]:
    """The string keys of the module-level dict ``name`` in ``path`` (read, not imported: the
    worker's modules import torch)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.AnnAssign | ast.Assign) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(t, ast.Name) and t.id == name for t in targets):
                return {str(k.value) for k in node.value.keys if isinstance(k, ast.Constant)}
    raise AssertionError(f"{name} not found in {path}")


def test_every_case_has_a_tolerance_for_each_of_its_dtypes() -> None:
    for case in (*CASES, SMOKE):
        assert set(case.dtypes) <= set(case.tolerances), case.id


def test_variant_names_are_unique_and_well_formed() -> None:
    names = [v for case in (*CASES, SMOKE) for v in case.variants()]
    assert len(names) == len(set(names))
    assert all(len(name.split("/")) == 3 for name in names)


def test_each_level_includes_the_previous_one() -> None:
    runs = [set(variants_for(level)) for level in LEVELS]
    assert runs[0] < runs[1] < runs[2]
    assert "allreduce/fp32/eager" in runs[1] - runs[0]
    assert {"matmul_throughput/bf16/eager", "copy_bandwidth/fp32/eager"} <= runs[2] - runs[1]


def test_the_quick_level_covers_the_ops_the_issue_names() -> None:
    covered = {case.id for case in CASES if case.level == "quick"}
    wanted = {"matmul", "linear", "conv2d", "softmax", "layer_norm", "rms_norm", "gelu", "silu",
              "sdpa", "embedding", "cross_entropy", "reductions", "elementwise", "gather",
              "scatter_add", "index", "cumsum", "sort", "topk", "adamw_mlp", "float64",
              "dynamic_shapes", "recompile"}  # fmt: skip
    assert wanted <= covered
    op_cases = [case for case in CASES if case.kind == "op"]
    assert all(case.backward and set(case.modes) == {"eager", "compile"} for case in op_cases)


def test_every_op_is_implemented_by_the_worker() -> None:
    implemented = _dict_keys(WORKER / "ops.py", "OPS")
    special = _dict_keys(WORKER / "main.py", "special")
    for case in (*CASES, SMOKE):
        if case.kind in ("op",):
            assert case.op in implemented, case.id
        elif case.kind != "training":
            assert case.op in special, case.id


def test_the_worker_imports_only_the_standard_library_torch_and_itself() -> None:
    allowed = set(sys.stdlib_module_names) | {"torch", "__future__"}
    for path in [*WORKER.glob("*.py"), *(WORKER.parents[1] / "worker" / "target").glob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                roots = {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                roots = {(node.module or "").split(".")[0]}
            else:
                continue
            assert roots <= allowed, f"{path.name} imports {roots - allowed}"


@pytest.mark.parametrize(
    ("pattern", "name", "expected"),
    [
        ("matmul", "matmul/bf16/eager", True),
        ("matmul", "matmul_throughput/bf16/eager", False),
        ("matmul/bf16", "matmul/bf16/compile", True),
        ("matmul/bf16", "matmul/fp32/compile", False),
        ("*/bf16/compile", "sdpa/bf16/compile", True),
        ("matmul*", "matmul_throughput/fp32/eager", True),
        ("sdpa/fp32/eager", "sdpa/fp32/eager", True),
    ],
)
def test_only_patterns(pattern: str, name: str, expected: bool) -> None:
    assert matches(name, pattern) is expected


def test_selecting_nothing_is_bad_input_that_says_why() -> None:
    with pytest.raises(BadInput, match="No self-test case matches 'conv3d'"):
        select_variants("quick", ["conv3d"])
    with pytest.raises(BadInput, match="is in level long") as raised:
        select_variants("standard", ["copy_bandwidth"])
    assert raised.value.hint == "Add --level long."


@pytest.mark.parametrize("device", ["neuron", "neuron:3", "cpu", "cuda", "cuda:1"])
def test_devices_accepted(device: str) -> None:
    assert check_device(device) == device


@pytest.mark.parametrize("device", ["tpu", "cpu:0", "neuron:x", "cuda:", ""])
def test_devices_rejected(device: str) -> None:
    with pytest.raises(BadInput, match="Unknown device"):
        check_device(device)


@pytest.mark.parametrize("timeout", [float("nan"), float("inf"), 0.0, -5.0])
def test_the_library_refuses_a_timeout_it_cannot_wait_for(timeout: float) -> None:
    from neuron_env.selftest import run_smoke

    with pytest.raises(BadInput, match="cannot be waited for"):
        run_smoke(Path(sys.executable), device="cpu", timeout=timeout)
