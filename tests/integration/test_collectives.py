"""``neuron-env collectives`` on the stand-in: gloo on CPU, real ranks started by torchrun on
127.0.0.1, with faults injected into one rank (``tests/fakes/collectives_faults``)."""

from __future__ import annotations

import json
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.conftest import REPO, CliRunner, Result
from tests.support.html_pages import assert_self_contained, render_in_chromium

pytestmark = pytest.mark.integration

FAULTS = REPO / "tests" / "fakes" / "collectives_faults"
SMALL = ("--sizes", "8,1024,65536", "--iters", "3", "--warmup", "1")


def collectives(
    cli: CliRunner, python: Path, *args: str, nproc: int = 2, fault: dict[str, str] | None = None
) -> Result:
    env = {"PYTHONPATH": str(FAULTS), **{f"COLLECTIVES_{k}": v for k, v in (fault or {}).items()}}
    return cli(
        "collectives", "--backend", "gloo", "--nproc-per-node", str(nproc),
        "--python", str(python), *SMALL, *args, env=env, timeout=300,
    )  # fmt: skip


def test_a_healthy_sweep_prints_nccl_tests_table_and_passes(
    cli: CliRunner, torch_python: Path
) -> None:
    result = collectives(cli, torch_python)
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "size        count      type  redop       time    algbw    busbw  #wrong" in out
    for op in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast"):
        assert f"# {op}" in out
    assert "        65536        16384   float32    sum" in out
    assert "# Out of bounds values : 0 OK" in out
    assert "# Avg bus bandwidth" in out
    assert out.rstrip().endswith("collectives: ok")


def test_a_rank_returning_wrong_data_fails_the_run_naming_op_size_rank_and_index(
    cli: CliRunner, torch_python: Path
) -> None:
    result = collectives(cli, torch_python, "--ops", "all_reduce", "--format", "json",
                         fault={"FAULT": "wrong", "FAULT_RANK": "1"})  # fmt: skip
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    assert doc["schema"] == "neuron-env/collectives/v1"
    assert doc["status"] == "fail" and doc["exit_code"] == 1
    wrong = [f for f in doc["failures"] if f["kind"] == "wrong"]
    assert [(f["op"], f["size"], f["rank"]) for f in wrong] == [
        ("all_reduce", 1024, 1),
        ("all_reduce", 65536, 1),
    ]  # fmt: skip (8 B has 2 elements: no index 5 to corrupt)
    assert "rank 1 returned 1 wrong element(s), the first at index 5" in wrong[0]["message"]
    assert doc["out_of_bounds"] == 2
    assert [r["wrong"] for r in doc["rows"]] == [0, 1, 1]


def test_a_hung_rank_ends_the_job_within_the_timeout_and_is_named(
    cli: CliRunner, torch_python: Path
) -> None:
    started = time.monotonic()
    result = collectives(cli, torch_python, "--ops", "all_reduce,all_gather", "--timeout", "5",
                         nproc=3, fault={"FAULT": "hang", "FAULT_RANK": "2",
                                         "FAULT_COUNT": "16384"})  # fmt: skip
    assert result.returncode == 1
    assert "FAIL hang: all_reduce at 65536 B: rank 2 did not answer within 5 s" in result.stdout
    assert "        1024          256   float32    sum" in result.stdout  # what ran is kept
    assert "all_gather" not in result.stdout  # the job ended there
    assert time.monotonic() - started < 120


def test_a_slow_rank_is_named_in_junit(cli: CliRunner, torch_python: Path, tmp_path: Path) -> None:
    report = tmp_path / "collectives.xml"
    result = collectives(cli, torch_python, "--ops", "all_reduce,broadcast", "--format", "junit",
                         "-o", str(report), fault={"FAULT": "slow", "FAULT_RANK": "0"})  # fmt: skip
    assert result.returncode == 1, result.stderr
    failures = ET.parse(report).getroot().findall(".//testcase/failure")
    messages = [f.get("message", "") for f in failures]
    assert any(m.startswith("rank 0 is ") and "slower than the median rank" in m for m in messages)
    assert not any("rank 1" in m for m in messages)


def test_the_html_page_charts_busbw_per_op_against_the_peak_over_nccl_tests_table(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    page_file = tmp_path / "collectives.html"
    fault = {"FAULT": "wrong", "FAULT_RANK": "1"}
    result = collectives(cli, torch_python, "--ops", "all_reduce,all_gather,broadcast",
                         "--instance-type", "trn2.48xlarge", "--format", "html",
                         "-o", str(page_file), fault=fault)  # fmt: skip
    assert result.returncode == 1, result.stderr
    page = assert_self_contained(page_file.read_text(encoding="utf-8"))
    series = [g["data-series"] for g in page.attrs["g"] if "data-series" in g]
    assert series == ["all_reduce", "all_gather", "broadcast"]
    assert page.tags["polyline"] == 3  # one line per op, three sizes on each
    assert all(len(p["points"].split()) == 3 for p in page.attrs["polyline"])
    assert [line["class"] for line in page.attrs["line"] if "class" in line] == ["reference"]
    labels = [t.get("class", "") for t in page.attrs["text"]]
    assert "axis-label x-label" in labels and "axis-label y-label" in labels
    shown = page.shown()
    assert "message size" in shown and "busbw (GB/s)" in shown and "32 KiB" in shown
    assert "peak: trn2.48xlarge's NeuronLink (1024 GB/s per chip)" in shown
    first = page.section("Failures").items[0]
    assert "all_reduce at 1024 B: rank 1 returned 1 wrong element(s)" in first
    assert [s.heading for s in page.sections if s.css == "op"] == series
    assert "65536 16384 float32 sum" in shown  # nccl-tests' columns below the chart
    rendered = render_in_chromium(page_file, tmp_path)
    assert rendered.tags["polyline"] == 3 and rendered.tags["table"] == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--ops", "all_reduce,allreduce"), "Unknown --ops value: allreduce."),
        (("--sizes", "8,lots"), "--sizes '8,lots' is not a list of sizes."),
        (("--instance-type", "trn9.huge"), "No link bandwidth is known for trn9.huge."),
    ],
)
def test_bad_input_is_exit_2_with_a_hint(
    cli: CliRunner, torch_python: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("collectives", "--backend", "gloo", "--nproc-per-node", "2",
                 "--python", str(torch_python), *args)  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_without_a_launcher_or_nproc_it_says_how_to_run_it(cli: CliRunner) -> None:
    result = cli("collectives", "--backend", "gloo")
    assert result.returncode == 2
    assert "no --nproc-per-node" in result.stderr
    assert "torchrun, srun or mpirun" in result.stderr
