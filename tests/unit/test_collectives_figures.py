"""nccl-tests' bandwidths, the judgements and the launchers' variables, on plain records."""

from __future__ import annotations

import pytest

from neuron_env.collectives import crash, figures, launch, nccom, plan
from neuron_env.collectives.cli import parse_sizes
from neuron_env.collectives.html_report import render
from neuron_env.collectives.models import CollectivesResult, NccomOp, NccomRow, Row
from neuron_env.collectives.nccom_report import Measured, parse_report, parse_table
from neuron_env.collectives.peaks import peak_for
from neuron_env.errors import BadInput
from tests.support.html_pages import assert_self_contained


def step(op: str, size: int, times: list[float]) -> dict[str, object]:
    ranks = [{"rank": r, "time_s": t, "wrong": None} for r, t in enumerate(times)]
    return {"op": op, "size": size, "count": size // 4, "ranks": ranks}


@pytest.mark.parametrize(
    ("op", "world", "factor"),
    [("all_reduce", 8, 1.75), ("all_gather", 4, 0.75), ("reduce_scatter", 2, 0.5),
     ("all_to_all", 4, 0.75), ("broadcast", 16, 1.0)],
)  # fmt: skip
def test_bus_factors_are_nccl_tests(op: str, world: int, factor: float) -> None:
    assert figures.bus_factor(op, world) == factor


def test_busbw_is_algbw_times_the_factor_and_a_ratio_of_the_peak() -> None:
    peak = peak_for("trn2.48xlarge", None, one_host=False)
    assert peak is not None and peak.gbytes_per_s == 400.0  # 3,200 Gbps
    row = figures.row(step("all_reduce", 2**30, [0.01, 0.02, 0.03, 0.04]), "float32", 4, peak)
    assert row.time_s == 0.025 and row.time_min_s == 0.01 and row.time_max_s == 0.04
    assert row.algbw == pytest.approx(2**30 / 0.025 / 1e9)
    assert row.busbw == pytest.approx(row.algbw * 1.5)
    assert row.peak_ratio == pytest.approx(row.busbw / 400.0)


def test_low_busbw_is_judged_at_large_sizes_only() -> None:
    peak = peak_for(None, 100.0, one_host=False)
    rows = [figures.row(step("all_reduce", s, [1.0, 1.0]), "float32", 2, peak) for s in (8, 2**30)]
    failures = figures.low_busbw(rows, 0.5, peak)
    assert [f.size for f in failures] == [2**30]


def test_a_rank_slower_than_the_median_by_more_than_the_limit_is_named() -> None:
    steps = [step("all_reduce", 8, [1.0, 1.0, 1.3, 1.1]) for _ in range(5)]
    assert [f.rank for f in figures.slow_ranks(steps, 0.2)] == [2]
    assert figures.slow_ranks(steps, 0.5) == []


def test_one_noisy_step_does_not_make_a_slow_rank() -> None:
    # Two steps before a hang: rank 1 looks 46 % slower, but two steps cannot tell it from noise.
    steps = [step("all_reduce", s, [1.0, 1.9]) for s in (8, 1024)]
    assert figures.slow_ranks(steps, 0.2) == []
    assert [f.rank for f in figures.slow_ranks([*steps, steps[0]], 0.2)] == [1]


def fingerprinted(prints: list[list[int]]) -> dict[str, object]:
    ranks = [{"rank": r, "fingerprint": p} for r, p in enumerate(prints)]
    return {"op": "all_reduce", "size": 1024, "ranks": ranks}


def test_a_mismatch_between_two_ranks_blames_neither() -> None:
    (failure,) = figures.mismatched_ranks(fingerprinted([[1, 2], [1, 3]]))
    assert failure.rank is None
    assert failure.message == (
        "all_reduce at 1024 B: ranks 0, 1 disagree and no majority says which is right"
    )


def test_a_mismatch_names_the_rank_outvoted_by_the_others() -> None:
    failures = figures.mismatched_ranks(fingerprinted([[9], [1], [1]]))
    assert [(f.rank, f.message) for f in failures] == [
        (0, "all_reduce at 1024 B: rank 0's output differs from the other ranks'")
    ]
    assert figures.mismatched_ranks(fingerprinted([[1], [1]])) == []


def test_a_hang_names_the_rank_that_never_reached_the_step() -> None:
    event = {"op": "all_gather", "size": 1024, "timeout": 5.0, "missing": [3], "unfinished": []}
    failure = figures.hang_failure(event)
    assert failure.rank == 3
    assert failure.message.startswith("all_gather at 1024 B: rank 3 did not answer within 5 s")


@pytest.mark.parametrize(
    "environ",
    [
        {"SLURM_PROCID": "5", "SLURM_NTASKS": "32", "SLURM_LOCALID": "5"},
        {"OMPI_COMM_WORLD_RANK": "5", "OMPI_COMM_WORLD_SIZE": "32",
         "OMPI_COMM_WORLD_LOCAL_RANK": "5"},
        {"RANK": "5", "WORLD_SIZE": "32", "LOCAL_RANK": "5"},
    ],
)  # fmt: skip
def test_srun_and_mpirun_variables_become_torchrun_s(environ: dict[str, str]) -> None:
    rendezvous = {"MASTER_ADDR": "node-1", "MASTER_PORT": "29500"}
    assert launch.rank_env({**environ, **rendezvous}) == {
        "RANK": "5", "WORLD_SIZE": "32", "LOCAL_RANK": "5", **rendezvous,
    }  # fmt: skip


def test_a_launcher_without_a_rendezvous_address_is_bad_input() -> None:
    with pytest.raises(BadInput, match="MASTER_ADDR and MASTER_PORT is not set"):
        launch.rank_env({"SLURM_PROCID": "0", "SLURM_NTASKS": "2"})
    assert launch.rank_env({}) is None


def test_sizes_take_lists_suffixes_and_ranges() -> None:
    assert parse_sizes("8,1K,2M") == (8, 1024, 2 * 2**20)
    assert parse_sizes("8:64") == (8, 16, 32, 64)
    assert parse_sizes("8:1G")[-1] == 2**30


@pytest.mark.parametrize(
    "text", ["0", "99999999999999999999G", "8:17G", "8,-4", "10000000000000000000000"]
)
def test_sizes_nobody_can_measure_are_bad_input_before_any_rank_starts(text: str) -> None:
    with pytest.raises(BadInput, match="is not a list of sizes"):
        parse_sizes(text)


# --- --compare-nccom: nccom-test's documented output, and the runs it is asked for ---------------

# tools/neuron-sys-tools/nccom-test.rst, "2 rank all-reduce ... with a step of 4x" (first rows).
DOCS_TABLE = """\
nccom-test -r 2 --minbytes 1kb --maxbytes 1gb --stepfactor 4 --datatype fp32 allr
       size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)
          1024             256    fp32          58           0.02           0.02
    1073741824       268435456    fp32       18930          52.83          52.83
Avg bus bandwidth:      23.6671GB/s
"""
# The same page, "Example results as JSON with --report-to-json-file" (first entry).
DOCS_REPORT = {"results": [{"size(B)": 1024, "count(elems)": 256, "type": "fp32",
                            "algbw(GB/s)": 0.16553675170497603, "busbw(GB/s)": 0.16036372821419553,
                            "time:avg(us)": 6.19}]}  # fmt: skip


def test_nccom_tests_printed_table_is_read_as_its_docs_show_it() -> None:
    assert parse_table(DOCS_TABLE) == [
        Measured(1024, 58.0, 0.02, 0.02),
        Measured(2**30, 18930.0, 52.83, 52.83),
    ]


def test_its_failure_lines_and_other_text_are_no_results() -> None:
    failed = ("     size(B)    count(elems)    type    time(us)    algbw(GB/s)    busbw(GB/s)\n"
              "    33554432    Failure running neuron-bench - log file /tmp/nccom_test_log.log\n"
              "1 errors found - test failed\n")  # fmt: skip
    assert parse_table(failed) == []
    assert parse_table("1024 256 fp32 58 0.02 0.02\n") == []  # no header: not its table
    assert parse_table("size(B) time(us) algbw(GB/s) busbw(GB/s)\n8 nan 1 1\n-8 1 1 1\n") == []


def test_its_json_report_is_read_and_anything_else_left_out() -> None:
    assert parse_report(DOCS_REPORT) == [Measured(1024, 6.19, 0.16553675170497603,
                                                  0.16036372821419553)]  # fmt: skip
    assert parse_report({"results": [{"size(B)": True, "time(us)": 1, "algbw(GB/s)": 1,
                                      "busbw(GB/s)": 1}, "x", {}]}) == []  # fmt: skip
    assert parse_report(["results"]) == [] and parse_report({"results": {}}) == []


def test_a_sweep_by_a_whole_factor_is_one_run_and_any_other_list_one_run_per_size() -> None:
    assert nccom.size_runs([8 * 2**i for i in range(28)]) == [(8, 2**30, 2)]
    assert nccom.size_runs([1024, 4096, 16384]) == [(1024, 16384, 4)]
    assert nccom.size_runs([8, 1024, 65536]) == [(8, 8, 2), (1024, 1024, 2), (65536, 65536, 2)]
    assert nccom.size_runs([1020]) == [(1020, 1020, 2)]


def test_the_html_page_draws_nccom_tests_busbw_dashed_beside_ours_and_tabulates_the_ratio() -> None:
    rows = [Row("all_reduce", s, s // 4, "float32", "sum", 1e-3, 1e-3, 1e-3, s / 1e6, s / 1e6, 0)
            for s in (1024, 2048)] + [Row("broadcast", 1024, 256, "float32", "none", 1e-3, 1e-3,
                                          1e-3, 1.0, 1.0, 0)]  # fmt: skip
    theirs = tuple(NccomRow(r.size, 1e-4, r.busbw / 2, r.busbw / 2, 2.0) for r in rows[:2])
    lacking = NccomOp("broadcast", "not-run", None, "not run by nccom-test (it has no broadcast)")
    ran = NccomOp("all_reduce", "ran", "allr", rows=theirs)
    result = CollectivesResult("gloo", 2, "float32", hosts=["vm"], rows=rows, complete=True,
                               nccom=[ran, lacking])  # fmt: skip
    page = assert_self_contained(render(result))
    series = [g["data-series"] for g in page.attrs["g"] if "data-series" in g]
    assert series == ["all_reduce", "broadcast", "all_reduce (nccom-test)"]
    dashed = ["stroke-dasharray" in p for p in page.attrs["polyline"]]
    assert dashed == [False, False, True]
    shown = page.shown()
    assert "nccom-test busbw (GB/s) ours / nccom-test" in shown
    assert "2048 512 float32 sum 1000.0 1000.0 1000.0 0.00 0.00 0 — 0.00 2.00×" in shown
    assert "nccom-test: not run by nccom-test (it has no broadcast)" in shown


# --- steps planned up front: every size measures something ----------------------------------


def test_a_split_op_s_smallest_size_is_one_element_per_rank() -> None:
    assert plan.smallest_size("all_gather", "bfloat16", 64) == 128
    assert plan.smallest_size("all_reduce", "bfloat16", 64) == 2
    steps, notes = plan.plan_steps(["all_gather", "all_reduce"], [128, 1000], "bfloat16", 64)
    assert [(s.op, s.size, s.count) for s in steps] == [
        ("all_gather", 128, 64), ("all_gather", 1024, 512),
        ("all_reduce", 128, 64), ("all_reduce", 1000, 500),
    ]  # fmt: skip
    assert notes == ["all_gather: 1000 B rounded up to 1024 B, a multiple of 128 B "
                     "(2 B bfloat16 x 64 ranks)"]  # fmt: skip


def test_sizes_too_small_for_an_op_are_refused_naming_each_op_s_smallest() -> None:
    with pytest.raises(BadInput) as refused:
        plan.plan_steps(["all_reduce", "all_to_all"], [1, 2, 3], "float32", 8)
    assert refused.value.message == (
        "--sizes 1 B is too small at 8 ranks in float32: it would measure nothing. The smallest "
        "valid size per op: all_reduce 4 B, all_to_all 32 B."
    )


def test_the_default_sweep_starts_at_each_op_s_smallest_size_and_has_no_empty_step() -> None:
    steps, notes = plan.plan_steps(["reduce_scatter", "broadcast"], None, "int64", 16)
    first = {op: min(s.size for s in steps if s.op == op) for op in ("reduce_scatter", "broadcast")}
    assert first == {"reduce_scatter": 128, "broadcast": 8}
    assert all(s.count > 0 for s in steps) and notes == []
    _, odd = plan.plan_steps(["all_gather"], None, "float32", 3)
    assert odd == ["all_gather: the default sizes are rounded up to multiples of 12 B "
                   "(4 B float32 x 3 ranks)"]  # fmt: skip


# --- which rank ended the job -----------------------------------------------------------------

TORCHRUN_SUMMARY = """\
torch.distributed.elastic.multiprocessing.errors.ChildFailedError:
=======================================================
/tmp/worker FAILED
-------------------------------------------------------
Failures:
[1]:
  time      : 2026-12-07_00:29:03
  host      : localhost
  rank      : 0 (local_rank: 0)
  exitcode  : -15 (pid: 21913)
  error_file: <N/A>
  traceback : Signal 15 (SIGTERM) received by PID 21913
-------------------------------------------------------
Root Cause (first observed failure):
[0]:
  time      : 2026-12-07_00:29:03
  host      : localhost
  rank      : 1 (local_rank: 1)
  exitcode  : -9 (pid: 21914)
  error_file: <N/A>
  traceback : Signal 9 (SIGKILL) received by PID 21914
=======================================================
"""  # torchrun of torch 2.13.0 here, one of two gloo ranks killed by SIGKILL


def test_torchrun_s_first_observed_failure_names_the_rank_host_and_signal() -> None:
    crashed = crash.first_failure("some traceback\n" + TORCHRUN_SUMMARY)
    assert crashed == crash.Crashed(1, "localhost", -9)
    assert crashed.how() == "was killed by signal SIGKILL"
    exited = TORCHRUN_SUMMARY.replace("exitcode  : -9", "exitcode  : 7")
    assert crash.first_failure(exited) == crash.Crashed(1, "localhost", 7)
    assert crash.Crashed(1, "h", 7).how() == "exited with code 7"
    assert crash.first_failure("Segmentation fault") is None
    assert crash.first_failure(TORCHRUN_SUMMARY.replace("rank      : 1", "rank      : x")) is None


def test_a_stopped_rank_is_named_from_its_missing_heartbeat() -> None:
    event = {"op": "all_reduce", "size": 1024, "timeout": 5.0, "missing": [], "stopped": [2],
             "unfinished": [0, 1, 2]}  # fmt: skip
    failure = figures.hang_failure(event)
    assert failure.rank == 2
    assert failure.message.startswith("all_reduce at 1024 B: rank 2 stopped running")


def test_ranks_with_another_neuron_rt_root_comm_id_are_named() -> None:
    event = {"variable": "NEURON_RT_ROOT_COMM_ID",
             "values": {"10.0.0.1:62182": [0, 1, 3], "": [2]}}  # fmt: skip
    failure = figures.env_mismatch(event)
    assert failure.kind == "env" and failure.rank == 2
    assert failure.message.startswith(
        "NEURON_RT_ROOT_COMM_ID differs across ranks ('10.0.0.1:62182' on ranks 0, 1, 3; unset "
        "on rank 2): rank 2 differ(s);"
    )


def test_a_nan_in_a_result_is_reported_by_name() -> None:
    record = {"rank": 1, "host": "trn-b", "time_s": 1.0,
              "wrong": {"wrong": 1, "index": 3, "got": "nan", "expected": 42}}  # fmt: skip
    (failure,) = figures.wrong_values({"op": "reduce_scatter", "size": 64, "ranks": [record]})
    assert failure.message == ("reduce_scatter at 64 B: rank 1 returned 1 wrong element(s), the "
                               "first at index 3 (got nan, expected 42)")  # fmt: skip
    assert failure.host == "trn-b"


def test_a_peer_that_left_mid_collective_is_named_with_the_error_this_rank_got() -> None:
    event = {"op": "all_reduce", "size": 1024, "timeout": 5.0, "rank": 0, "missing": [1],
             "stopped": [1], "unfinished": [0, 1],
             "error": "DistBackendError: Connection closed by peer [127.0.0.1]:41000"}  # fmt: skip
    failure = figures.hang_failure(event)
    assert failure.rank == 1
    assert failure.message == (
        "all_reduce at 1024 B: rank 1 left the job (no heartbeat, never reached the collective); "
        "rank 0's collective failed at once: DistBackendError: Connection closed by peer "
        "[127.0.0.1]:41000"
    )
