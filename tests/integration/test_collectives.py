"""``neuron-env collectives`` on the stand-in: gloo on CPU, real ranks started by torchrun on
127.0.0.1, with faults injected into one rank (``tests/fakes/collectives_faults``)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.cli import REPO, CliRunner, Result, cli_argv, machine_env
from tests.support.html_pages import assert_self_contained, render_in_chromium
from tests.support.junit import assert_valid_junit

pytestmark = pytest.mark.integration

FAULTS = REPO / "tests" / "fakes" / "collectives_faults"
FAKE_NCCOM = REPO / "tests" / "fakes" / "fake_nccom.py"
SMALL = ("--sizes", "8,1024,65536", "--iters", "3", "--warmup", "1")
# Rank speeds are judged only where a test asks (``judge_speed``): on a busy machine one of two
# ranks is often 20 % slower than the other, which would fail a healthy run (CI, stop 45).
NOT_JUDGED = ("--slow-rank", "1000")


def with_faults() -> str:
    """PYTHONPATH with the fault module first (and what the run was given after it)."""
    return os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH")) if p)


def collectives(
    cli: CliRunner,
    python: Path,
    *args: str,
    nproc: int = 2,
    fault: dict[str, str] | None = None,
    env: dict[str, str] | None = None,
    judge_speed: bool = False,
) -> Result:
    env = {"PYTHONPATH": with_faults(), **(env or {}),
           **{f"COLLECTIVES_{k}": v for k, v in (fault or {}).items()}}  # fmt: skip
    return cli(
        "collectives", "--backend", "gloo", "--nproc-per-node", str(nproc),
        "--python", str(python), *SMALL, *(() if judge_speed else NOT_JUDGED), *args,
        env=env, timeout=300,
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
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    pids = tmp_path / "pids"
    pids.mkdir()
    result = collectives(cli, torch_python, "--ops", "all_reduce,all_gather", "--timeout", "5",
                         "--sizes", "12,1024,65536",  # 8 B gives all_gather no element per rank
                         nproc=3, fault={"FAULT": "hang", "FAULT_RANK": "2",
                                         "FAULT_COUNT": "16384", "PIDS": str(pids)})  # fmt: skip
    assert result.returncode == 1
    assert "FAIL hang: all_reduce at 65536 B: rank 2 did not answer within 5 s" in result.stdout
    assert "        1024          256   float32    sum" in result.stdout  # what ran is kept
    assert "\n# all_gather\n" not in result.stdout  # the job ended there: no all_gather table
    assert time.monotonic() - started < 120
    assert_no_rank_left(pids, 3)


def test_a_slow_rank_is_named_in_junit(cli: CliRunner, torch_python: Path, tmp_path: Path) -> None:
    report = tmp_path / "collectives.xml"
    result = collectives(cli, torch_python, "--ops", "all_reduce,broadcast", "--format", "junit",
                         "-o", str(report), fault={"FAULT": "slow", "FAULT_RANK": "0"},
                         judge_speed=True)  # fmt: skip
    assert result.returncode == 1, result.stderr
    failures = assert_valid_junit(report).findall(".//testcase/failure")
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
        (("--timeout", "nan"), "--timeout nan is not a positive number."),
        (("--timeout", "inf"), "--timeout inf is not a positive number."),
        (("--timeout", "-1"), "--timeout -1 is not a positive number."),
        (("--peak-gbps", "0"), "--peak-gbps 0 is not a positive number."),
        (("--peak-gbps", "nan"), "--peak-gbps nan is not a positive number."),
        (("--nproc-per-node", "0"), "--nproc-per-node 0 starts no rank."),
        (("--nproc-per-node", "abc"), "'abc' is not a valid int."),
        (("--sizes", "1,2,3"), "--sizes 1 B is too small at 2 ranks in float32: it would measure "
         "nothing. The smallest valid size per op: all_reduce 4 B, all_gather 8 B, "
         "reduce_scatter 8 B, all_to_all 8 B, broadcast 4 B."),
    ],
)  # fmt: skip
def test_bad_input_is_exit_2_with_a_hint(
    cli: CliRunner, torch_python: Path, args: tuple[str, ...], message: str
) -> None:
    result = cli("collectives", "--backend", "gloo", "--nproc-per-node", "2",
                 "--python", str(torch_python), *args)  # fmt: skip
    assert result.returncode == 2
    assert message in " ".join(result.stderr.split())  # as wrapped to the terminal
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # no table


LAUNCHED = {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29999"}


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"RANK": "abc", "WORLD_SIZE": "2"}, "RANK='abc' is not a whole number of 0 or more."),
        ({"RANK": "2", "WORLD_SIZE": "2"}, "RANK=2 is not a rank of a job of WORLD_SIZE=2"),
        ({"RANK": "0", "WORLD_SIZE": "0"}, "WORLD_SIZE='0' is not a whole number of 1 or more."),
        ({"SLURM_PROCID": "0", "SLURM_NTASKS": "2", "WORLD_SIZE": "4"},
         "WORLD_SIZE='4' disagrees with the srun that started this rank (SLURM_NTASKS=2)."),
        ({"RANK": "0", "WORLD_SIZE": "4", "SLURM_PROCID": "0", "SLURM_NTASKS": "2"},
         "SLURM_NTASKS='2' disagrees with the torchrun that started this rank (WORLD_SIZE=4)."),
    ],
)  # fmt: skip
def test_launcher_variables_that_name_no_rank_are_exit_2_in_a_json_envelope(
    cli: CliRunner, torch_python: Path, env: dict[str, str], message: str
) -> None:
    result = cli("collectives", "--backend", "gloo", "--python", str(torch_python),
                 "--format", "json", env={**LAUNCHED, **env})  # fmt: skip
    assert result.returncode == 2
    doc = json.loads(result.stdout)
    assert doc["status"] == "error" and doc["exit_code"] == 2
    assert doc["errors"][0]["message"].startswith(message)
    assert "Traceback" not in result.stderr


def test_a_target_interpreter_without_torch_is_exit_2_before_any_table(
    cli: CliRunner, tmp_path: Path
) -> None:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "venv")],
                   check=True)  # fmt: skip
    python = tmp_path / "venv" / "bin" / "python"
    result = cli("collectives", "--backend", "gloo", "--nproc-per-node", "2",
                 "--python", str(python))  # fmt: skip
    assert result.returncode == 2
    assert result.stdout == ""
    said = " ".join(result.stderr.split())
    assert f"{python} has no torch: the ranks of collectives run in that interpreter." in said
    json_result = cli("collectives", "--backend", "gloo", "--nproc-per-node", "2",
                      "--python", str(python), "--format", "json")  # fmt: skip
    doc = json.loads(json_result.stdout)
    assert doc["exit_code"] == 2 and "has no torch" in doc["errors"][0]["message"]


def test_without_a_launcher_or_nproc_it_says_how_to_run_it(cli: CliRunner) -> None:
    result = cli("collectives", "--backend", "gloo")
    assert result.returncode == 2
    assert "no --nproc-per-node" in result.stderr
    assert "torchrun, srun or mpirun" in result.stderr


# --- --compare-nccom, against a stand-in nccom-test on PATH (tests/fakes/fake_nccom.py) ---------


def fake_nccom(tmp_path: Path, fault: str = "") -> dict[str, str]:
    """``nccom-test`` in a folder first on PATH; the environment that puts it there."""
    folder = tmp_path / "bin"
    folder.mkdir()
    script = folder / "nccom-test"
    script.write_text(f"#!{sys.executable}\n" + FAKE_NCCOM.read_text(encoding="utf-8"),
                      encoding="utf-8")  # fmt: skip
    script.chmod(0o755)
    return {
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "NCCOM_FAKE_CALLS": str(tmp_path / "calls.jsonl"),
        "NCCOM_FAKE_PID": str(tmp_path / "nccom.pid"),
        "NCCOM_FAKE_FAULT": fault,
    }


def calls(tmp_path: Path) -> list[list[str]]:
    text = (tmp_path / "calls.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_compare_nccom_runs_it_on_the_same_sizes_and_reports_both_with_progress_on_stderr(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    result = collectives(cli, torch_python, "--ops", "all_reduce,all_gather,broadcast",
                         "--sizes", "1K:4K", "--compare-nccom", "--format", "json",
                         env=fake_nccom(tmp_path))  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    doc = json.loads(result.stdout)  # progress never reaches stdout
    same = ["-r", "2", "-N", "1", "-b", "1024", "-e", "4096", "-f", "2", "-n", "3", "-w", "1",
            "-d", "fp32", "--non-interactive"]  # fmt: skip
    assert [c[: len(same)] for c in calls(tmp_path)] == [same, same]
    assert [c[-1] for c in calls(tmp_path)] == ["allr", "allg"]  # it has no broadcast
    entries = {e["op"]: e for e in doc["nccom"]}
    assert entries["broadcast"]["status"] == "not-run"
    assert entries["broadcast"]["message"] == "not run by nccom-test (it has no broadcast)"
    ours = {(r["op"], r["size"]): r["busbw"] for r in doc["rows"]}
    for op in ("all_reduce", "all_gather"):
        rows = entries[op]["rows"]
        assert entries[op]["status"] == "ran" and [r["size"] for r in rows] == [1024, 2048, 4096]
        for row in rows:  # its GiB/s (size / 1 MiB) in GB/s, and ours over it
            assert row["busbw"] == pytest.approx(row["size"] / 2**20 * 2**30 / 1e9)
            assert row["ratio"] == pytest.approx(ours[(op, row["size"])] / row["busbw"])
    assert "  all_reduce  1/3  1 KiB  time " in result.stderr
    assert "  broadcast  3/3  4 KiB  time " in result.stderr
    assert "  nccom-test 2/2: all_gather" in result.stderr


def test_the_text_table_gains_nccom_tests_busbw_read_from_its_table_without_a_json_report(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    env = fake_nccom(tmp_path, "table")
    result = collectives(cli, torch_python, "--ops", "all_reduce,broadcast", "--sizes", "1M:2M",
                         "--compare-nccom", env=env)  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    out = result.stdout
    assert "  #wrong    nccom   ours/" in out and "(GB/s)   nccom" in out
    lines = [line.split() for line in out.splitlines() if line.startswith(" ")]
    assert [(w[0], w[8]) for w in lines if w[3] == "sum"] == [("1048576", "1.07"),
                                                               ("2097152", "2.15")]  # fmt: skip
    assert [w[8:10] for w in lines if w[3] == "none"] == [["-", "-"], ["-", "-"]]
    assert "# nccom-test: not run by nccom-test (it has no broadcast)" in out
    assert out.rstrip().endswith("collectives: ok")


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("fail", "nccom-test allr failed with exit code 1; it said: 1024    Failure running "
                 "neuron-bench - log file /tmp/nccom_test_x.log | 1 errors found - test failed"),
        ("garbage", "nccom-test allr printed no result table; it said: \\x1b]0;owned\\x07"
                    "Segmentation fault"),
    ],
)  # fmt: skip
def test_an_nccom_test_that_fails_or_prints_garbage_fails_the_comparison_not_our_figures(
    cli: CliRunner, torch_python: Path, tmp_path: Path, fault: str, said: str
) -> None:
    env = fake_nccom(tmp_path, fault)
    result = collectives(cli, torch_python, "--ops", "all_reduce", "--sizes", "1K:2K",
                         "--compare-nccom", env=env)  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"FAIL nccom: {said}" in result.stdout
    assert "         2048          512   float32    sum" in result.stdout  # ours still shown
    assert "# Out of bounds values : 0 OK" in result.stdout
    assert "\x1b" not in result.stdout and "Traceback" not in result.stderr


def test_a_hung_nccom_test_is_stopped_at_the_timeout_and_the_other_ops_are_not_tried(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    started = time.monotonic()
    result = collectives(cli, torch_python, "--ops", "all_reduce,all_gather", "--sizes", "1K:2K",
                         "--timeout", "5", "--compare-nccom", "--format", "json", "--quiet",
                         env=fake_nccom(tmp_path, "hang"))  # fmt: skip
    assert result.returncode == 1, result.stdout + result.stderr
    doc = json.loads(result.stdout)
    failure = next(f for f in doc["failures"] if f["kind"] == "nccom")
    assert "did not finish within 10 s and was stopped" in failure["message"]  # 5 s per size
    statuses = [(e["op"], e["status"]) for e in doc["nccom"]]
    assert statuses == [("all_reduce", "failed"), ("all_gather", "not-run")]
    assert doc["nccom"][1]["message"] == "not run: nccom-test allr did not finish"
    assert [r["op"] for r in doc["rows"]] == ["all_reduce"] * 2 + ["all_gather"] * 2
    pid = int((tmp_path / "nccom.pid").read_text(encoding="utf-8"))
    with pytest.raises(ProcessLookupError):  # killed, not left behind
        os.kill(pid, 0)
    assert result.stderr == ""  # --quiet: no progress
    assert time.monotonic() - started < 120


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ((), {"PATH": "/usr/bin:/bin"}, "--compare-nccom: nccom-test is not on PATH."),
        (("--dtype", "int64"), {}, "--compare-nccom: nccom-test has no int64."),
        (("--ops", "broadcast"), {}, "--compare-nccom: nccom-test runs none of broadcast."),
    ],
)
def test_a_comparison_that_cannot_run_is_bad_input_before_any_rank_starts(
    cli: CliRunner,
    torch_python: Path,
    tmp_path: Path,
    args: tuple[str, ...],
    env: dict[str, str],
    message: str,
) -> None:
    result = cli("collectives", "--backend", "gloo", "--nproc-per-node", "2", "--python",
                 str(torch_python), "--compare-nccom", *args,
                 env={**fake_nccom(tmp_path), **env})  # fmt: skip
    assert result.returncode == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "calls.jsonl").exists()
    if "PATH" in env:
        assert "nccom-test comes with the aws-neuronx-tools package" in result.stderr


def test_under_a_launcher_compare_nccom_says_it_runs_on_one_host(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    launcher = {"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1"}
    result = cli("collectives", "--backend", "gloo", "--python", str(torch_python),
                 "--compare-nccom", env={**fake_nccom(tmp_path), **launcher})  # fmt: skip
    assert result.returncode == 2
    said = " ".join(result.stderr.split())  # as wrapped to the terminal's width
    assert "--compare-nccom runs nccom-test on this host" in said
    assert "nccom-test -r RANKS -N NODES --hosts ... (its MPI mode)" in said


def _ranks_running(marker: str) -> list[str]:
    """The rank processes whose request holds ``marker`` that still run (a zombie has ended)."""
    running = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            cmdline = (proc / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (proc / "stat").read_text().rpartition(")")[2].split()[0]
        except OSError:  # it ended while we looked
            continue
        if "worker/target collectives {" in cmdline and marker in cmdline and state != "Z":
            running.append(f"{proc.name} ({state})")
    return running


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_sweep_leaves_no_rank_running(
    torch_python: Path, sig: signal.Signals
) -> None:
    """torchrun starts the ranks in sessions of their own: killing its process group missed them,
    and they ran on after neuron-env had said what it started was stopped."""
    marker = f"{os.getpid()}{sig.value}"  # a timeout no other test asks for: finds our ranks
    argv = cli_argv("collectives", "--backend", "gloo", "--nproc-per-node", "2", "--python",
                    str(torch_python), "--sizes", "8:256M", "--timeout", marker)  # fmt: skip
    with subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                          env=machine_env()) as proc:  # fmt: skip
        assert proc.stderr is not None
        for line in proc.stderr:  # the ranks are running once a step is reported
            if "all_reduce" in line:
                break
        assert _ranks_running(marker), "the sweep had started its ranks"
        proc.send_signal(sig)
        proc.stderr.read()
        code = proc.wait(timeout=60)
    assert code == 128 + sig.value
    assert _ranks_running(marker) == []


# --- wrong answers, crashed and stopped ranks, settings that differ ---------------------------

CORRUPTIONS = REPO / "tests" / "support" / "collectives_corruptions.py"


@pytest.mark.parametrize(
    ("dtype", "plan"),
    [
        ("float32", "all_reduce:nan,all_gather:zeros,reduce_scatter:inf,all_to_all:swap,"
                    "broadcast:flip"),
        ("bfloat16", "all_reduce:stale,all_gather:stale,reduce_scatter:flip,all_to_all:nan,"
                     "broadcast:zeros"),
    ],
    ids=["float32", "bfloat16"],
)  # fmt: skip
def test_each_corruption_of_a_rank_s_output_fails_its_op_naming_the_first_wrong_element(
    cli: CliRunner, torch_python: Path, dtype: str, plan: str
) -> None:
    result = collectives(cli, torch_python, "--dtype", dtype, "--sizes", "1K,4K", "--format",
                         "json", fault={"FAULT": "corrupt", "FAULT_RANK": "1",
                                                     "CORRUPT": plan})  # fmt: skip
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    wrong = {(f["op"], f["size"]): f for f in doc["failures"] if f["kind"] == "wrong"}
    for op, how in (p.split(":") for p in plan.split(",")):
        sizes = [4096] if how == "stale" else [1024, 4096]  # a stale buffer needs a size before
        for size in sizes:
            failure = wrong[(op, size)]
            assert failure["rank"] == 1 and failure["host"]
            assert failure["message"].startswith(f"{op} at {size} B: rank 1 returned ")
            assert ", the first at index " in failure["message"]
            if how in ("nan", "inf"):
                assert f"(got {how}, expected " in failure["message"]
    assert all(f["rank"] == 1 for f in doc["failures"] if f["kind"] == "wrong")
    assert all(r["count"] > 0 for r in doc["rows"])


def test_every_corruption_is_caught_at_2_8_and_64_ranks_and_exact_sums_pass(
    torch_python: Path,
) -> None:
    """The worker's check on synthetic outputs of rank world-1 (no 64 processes needed)."""
    done = subprocess.run([str(torch_python), str(CORRUPTIONS), "2,8,64"], capture_output=True,
                          text=True, check=True, timeout=300,
                          env={**machine_env(), "PYTHONPATH": str(REPO)})  # fmt: skip
    verdicts = json.loads(done.stdout)
    kinds = {v["kind"] for v in verdicts}
    assert kinds == {"none", "summed-in-dtype", "nan", "inf", "zeros", "flip", "swap", "stale"}
    assert {v["world"] for v in verdicts} == {2, 8, 64}
    missed = [
        v for v in verdicts if v["kind"] not in ("none", "summed-in-dtype") and not v["wrong"]
    ]
    assert missed == []
    flagged = [v for v in verdicts if v["kind"] in ("none", "summed-in-dtype") and v["wrong"]]
    assert flagged == []  # right outputs, and reductions added in the dtype in any order, pass
    nan = next(v for v in verdicts if v["kind"] == "nan" and v["world"] == 64)
    assert nan["wrong"]["index"] == nan["count"] // 2 and nan["wrong"]["got"] == "nan"
    zeros = [v for v in verdicts if (v["kind"], v["dtype"], v["op"], v["world"]) ==
             ("zeros", "bfloat16", "all_gather", 64)]  # fmt: skip
    assert zeros[0]["wrong"]["got"] == 0 and zeros[0]["wrong"]["expected"] != 0


def _pids(folder: Path) -> list[tuple[int, int, int]]:
    """(rank, pid, process group) of every rank the fault module saw start."""
    rows = [p.read_text().split() for p in folder.iterdir()]
    return [(int(r), int(pid), int(group)) for r, pid, group in rows]


def _running(pid: int | None = None, group: int | None = None) -> list[int]:
    """Processes (not zombies) with this PID, or in this process group."""
    found = []
    for proc in Path("/proc").glob("[0-9]*"):
        try:
            fields = (proc / "stat").read_text().rpartition(")")[2].split()
        except OSError:  # it ended while we looked
            continue
        state, pgrp = fields[0], int(fields[2])
        if state != "Z" and (int(proc.name) == pid or pgrp == group):
            found.append(int(proc.name))
    return found


def assert_no_rank_left(folder: Path, ranks: int) -> None:
    started = _pids(folder)
    assert sorted(r for r, _, _ in started) == list(range(ranks))
    for _, pid, group in started:
        assert _running(pid=pid) == [], f"rank process {pid} is still running"
        assert _running(group=group) == [], f"process group {group} still has processes"


def test_a_crashed_rank_is_named_with_its_host_and_signal_and_no_rank_is_left(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    started = time.monotonic()
    fault = {"FAULT": "crash", "FAULT_RANK": "1", "FAULT_COUNT": "256", "PIDS": str(pids)}
    result = collectives(cli, torch_python, "--ops", "all_reduce", "--format", "json",
                         "--timeout", "20", fault=fault)  # fmt: skip
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    (crash,) = [f for f in doc["failures"] if f["kind"] == "crash"]
    assert crash["rank"] == 1 and crash["host"]
    assert crash["message"] == (f"rank 1 on {crash['host']} was killed by signal SIGKILL; "
                                "the other ranks were stopped")  # fmt: skip
    assert [r["size"] for r in doc["rows"]] == [8]  # what ran before it is kept
    assert_no_rank_left(pids, 2)
    assert time.monotonic() - started < 120


def test_a_stopped_rank_is_found_within_the_timeout_named_and_drained(
    cli: CliRunner, torch_python: Path, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    started = time.monotonic()
    result = collectives(cli, torch_python, "--ops", "all_reduce", "--timeout", "5", nproc=3,
                         fault={"FAULT": "stop", "FAULT_RANK": "2", "FAULT_COUNT": "256",
                                "PIDS": str(pids)})  # fmt: skip
    assert result.returncode == 1, result.stderr
    assert (
        "FAIL hang: all_reduce at 1024 B: rank 2 stopped running (no heartbeat: its process "
        "was stopped, e.g. SIGSTOP, froze or ended) and did not answer within 5 s"
    ) in (result.stdout)
    assert_no_rank_left(pids, 3)  # SIGKILL (the ranks die with torchrun) ends a stopped one too
    assert time.monotonic() - started < 60  # was 39 s of torchrun's SIGTERM grace, unnamed


def test_ranks_with_different_neuron_rt_root_comm_id_are_named_before_any_collective(
    cli: CliRunner, torch_python: Path
) -> None:
    result = collectives(cli, torch_python, "--ops", "all_reduce", "--format", "json", nproc=3,
                         env={"NEURON_RT_ROOT_COMM_ID": "10.0.0.1:62182"},
                         fault={"FAULT": "comm-id", "FAULT_RANK": "2",
                                "FAULT_VALUE": "10.0.0.9:62182"})  # fmt: skip
    assert result.returncode == 1, result.stderr
    doc = json.loads(result.stdout)
    (env,) = doc["failures"]
    assert env["kind"] == "env" and env["rank"] == 2
    assert env["message"].startswith(
        "NEURON_RT_ROOT_COMM_ID differs across ranks ('10.0.0.1:62182' on ranks 0, 1; "
        "'10.0.0.9:62182' on rank 2): rank 2 differ(s);"
    )
    assert "Nrt::BuildGlobalComm failed" in env["message"]
    assert doc["rows"] == []


def test_redact_shows_each_host_as_host_n(cli: CliRunner, torch_python: Path) -> None:
    """``--redact`` (issue 38 §3): the ranks' host name leaves every report; the figures stay."""
    import socket

    plain = collectives(cli, torch_python, "--format", "json")
    result = collectives(cli, torch_python, "--format", "json", "--redact")
    assert result.returncode == plain.returncode == 0, plain.stdout + result.stdout + result.stderr
    assert json.loads(plain.stdout)["hosts"] == [socket.gethostname()]
    document = json.loads(result.stdout)
    assert document["hosts"] == ["host-1"]
    assert len(document["rows"]) == len(json.loads(plain.stdout)["rows"])
