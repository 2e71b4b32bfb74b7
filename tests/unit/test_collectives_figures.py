"""nccl-tests' bandwidths, the judgements and the launchers' variables, on plain records."""

from __future__ import annotations

import pytest

from neuron_env.cli.collectives import parse_sizes
from neuron_env.collectives import figures, launch
from neuron_env.collectives.peaks import peak_for
from neuron_env.errors import BadInput


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
