"""ENTRY and --shapes as typed on the command line, and the advice drawn from a result."""

from __future__ import annotations

from pathlib import Path

import pytest

from neuron_env.errors import BadInput
from neuron_env.evaluate import Evaluation, GraphBreak, StageResult, parse_entry, parse_shapes
from neuron_env.evaluate.advice import advise


def test_a_module_entry_keeps_its_dotted_names() -> None:
    entry = parse_entry("my_package.models:Factory.make")
    assert (entry.module, entry.attr, entry.path) == ("my_package.models", "Factory.make", None)


def test_a_file_entry_is_resolved_against_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "block.py").write_text("def make(): ...\n")
    entry = parse_entry("models/block.py:make", cwd=tmp_path)
    assert entry.path == tmp_path / "models" / "block.py" and entry.module is None
    assert entry.request()["path"] == str(tmp_path / "models" / "block.py")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("make", "is not module:function nor path.py:function"),
        ("pkg.mod:", "is not module:function nor path.py:function"),
        ("pkg.mod:1st", "'1st' in ENTRY 'pkg.mod:1st' is not a Python name."),
        ("my-package:make", "'my-package' in ENTRY 'my-package:make' is neither a module name"),
        ("absent.py:make", "absent.py does not exist."),
        ("models/:make", "models/ is not a Python file (.py)."),
    ],
)
def test_a_bad_entry_is_bad_input(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "models").mkdir()
    with pytest.raises(BadInput) as raised:
        parse_entry(text, cwd=tmp_path)
    assert message in raised.value.message


def test_shapes_are_split_on_commas_and_x_and_kept_once_in_order() -> None:
    assert parse_shapes(["2x128,4x128", "2x128", " 8X1 "]) == ((2, 128), (4, 128), (8, 1))
    assert parse_shapes([]) == ()


@pytest.mark.parametrize("value", ["2x", "x", "0x4", "2x-1", "2.5x4", "abc"])
def test_a_bad_shape_is_bad_input(value: str) -> None:
    with pytest.raises(BadInput, match="is not a shape"):
        parse_shapes([value])


def _run(*stages: StageResult) -> Evaluation:
    return Evaluation("m.py:make", "neuron", "/venv/bin/python", stages=stages, compile=True)


def test_recompiles_bring_the_bucketing_advice_and_the_matrix_note() -> None:
    shapes = [StageResult(f"shape {n}x8", "pass", graphs=1, first_call_s=2.0) for n in (1, 2, 4)]
    evaluation = _run(StageResult("eager", "pass"), *shapes)
    assert evaluation.recompiles == 2
    (line,) = advise(evaluation, "Pad or bucket shapes. (Neuron 2.34.0)")
    assert line.startswith("3 of 3 input shapes compiled a graph of their own")
    assert "their first calls took 6 s in all" in line
    assert line.endswith("Support matrix: Pad or bucket shapes. (Neuron 2.34.0)")


def test_shapes_that_reuse_a_graph_need_no_advice() -> None:
    shapes = [
        StageResult("shape 1x8", "pass", graphs=1),
        StageResult("shape 2x8", "pass", graphs=0),
    ]
    assert advise(_run(*shapes)) == ()


def test_graph_breaks_and_fallback_are_advised_on() -> None:
    compiled = StageResult("compile", "pass", graphs=2, graph_breaks=(GraphBreak("print", 2),))
    eager = StageResult("eager", "fallback", fallback_ops=("aten::sort",))
    lines = advise(_run(eager, compiled))
    assert lines[0].startswith("torch.compile split the model at 2 graph break(s) (first: print)")
    assert lines[1].startswith("aten::sort ran on the CPU instead of the device")
