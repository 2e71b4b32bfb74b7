"""The HTML report of ``neuron-env evaluate``: one self-contained page, user strings escaped."""

from __future__ import annotations

from neuron_env.evaluate import Evaluation, FailedOp, GraphBreak, ModelInfo, StageResult, TensorInfo
from neuron_env.evaluate.html_report import render
from neuron_env.worker.results import Comparison, DeviceInfo, Problem
from tests.support.html_pages import parse

HOSTILE = "<script>alert('x')</script>&<img src=http://evil/x.png>"


def _comparison(tensor: str, ok: bool = True) -> Comparison:
    return Comparison(tensor, ok, 0 if ok else 3, 10, 1e-3, 1e-3, 2e-4, 5e-4, 1.0, 0.2)


def _evaluation(**changes: object) -> Evaluation:
    info = DeviceInfo("neuron", "neuron", True, 2, "3.12.3", "/venv/bin/python", "2.14.0",
                      name=HOSTILE, compile_backend="neuron", torch_neuronx="2.14.3.0")  # fmt: skip
    model = ModelInfo(HOSTILE, f"pkg.{HOSTILE}", f"{HOSTILE}.py:3", 1000, 1000, ("fp32",),
                      (TensorInfo(HOSTILE, (2, 8), "fp32"),), False, True, False)  # fmt: skip
    eager = StageResult("eager", "fallback", f"fell back: {HOSTILE}",
                        (_comparison("output"), _comparison(f"grad {HOSTILE}", ok=False)),
                        fallback_ops=(HOSTILE,), op_counts={"aten::mm": 3, HOSTILE: 1},
                        first_call_s=2.5, steady_s=0.004, repeats=5)  # fmt: skip
    compiled = StageResult("compile", "error", "compilation failed", graphs=2,
                           graph_breaks=(GraphBreak(HOSTILE, 1),), error=HOSTILE,
                           failed_ops=(FailedOp(HOSTILE, HOSTILE),), first_call_s=30.0)  # fmt: skip
    fields: dict[str, object] = {
        "entry": f"{HOSTILE}.py:make",
        "device": "neuron",
        "python": "/venv/bin/python",
        "info": info,
        "model": model,
        "stages": (eager, compiled),
        "compile": True,
        "advice": (HOSTILE,),
    }
    fields.update(changes)
    return Evaluation(**fields)  # type: ignore[arg-type]


def test_every_user_string_is_escaped_and_nothing_external_is_loaded() -> None:
    markup = render(_evaluation())
    page = parse(markup)
    assert page.external == []
    assert not {"script", "img", "link", "iframe"} & set(page.tags)
    assert HOSTILE in page.headings[0]
    shown = "".join(page.text)
    assert shown.count(HOSTILE) >= 10  # name, class, entry, input, tensor, op, break, error, advice
    assert "<script" not in markup.replace("&lt;script", "")


def test_the_page_has_its_tables_and_a_chart_of_first_call_against_steady_times() -> None:
    page = parse(render(_evaluation()))
    assert page.tags["style"] == 1
    assert page.tags["table"] == 7  # environment, model, stages, numerics, ops, breaks, failed ops
    assert page.tags["svg"] == 1
    # a bar per timing (eager first + steady, compile first) and two legend swatches
    assert page.tags["rect"] == 5
    shown = " ".join(page.text)
    assert "eager first call" in shown and "compile first call" in shown
    assert "30.00 s" in shown and "4.00 ms" in shown
    assert "1 ms" in shown and "100 s" in shown  # log-scale decades


def test_a_run_that_could_not_start_still_renders_why() -> None:
    problem = Problem("no-torch", "torch is not installed in /venv/bin/python.", "Install it.")
    evaluation = _evaluation(info=None, model=None, stages=(), problem=problem, advice=())
    page = parse(render(evaluation))
    shown = " ".join(page.text)
    assert "torch is not installed in /venv/bin/python." in shown and "Install it." in shown
    assert page.tags["svg"] == 0
