"""The Slurm examples on a real Slurm: the shipped job script (examples/slurm) and the preflight
health check, submitted with the real ``sbatch`` to a two-node cluster on 127.0.0.1
(tests/support/slurm.py: munged, slurmctld, two slurmd), run by the real ``srun``, drained with the
real ``scontrol``; results read from ``scontrol show job``/``node`` and the jobs' files (no
slurmdbd, so no ``sacct``). Ranks run collectives on gloo; faults come from
tests/fakes/collectives_faults.

Where this machine cannot run the cluster (not root, Slurm not installed) the tests are skipped
with the reason, shown in pytest's summary; scripts/test.sh installs Slurm when it runs as root
(as CI does) and then sets NEURON_ENV_TEST_REQUIRE_SLURM, which makes that a failure instead.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support import slurm
from tests.support.cli import NEURON_ENV, REPO
from tests.support.hosts import scenario_host

pytestmark = pytest.mark.integration

SBATCH = REPO / "examples" / "slurm" / "collectives-preflight.sbatch"
FAULTS = REPO / "tests" / "fakes" / "collectives_faults"
# Commas inside one setting: sbatch must carry it whole (it is exported, not --export=ALL,X=a,b).
SMALL = (
    "--backend gloo --ops all_reduce,broadcast --sizes 8,1024,65536 --iters 2 --warmup 1 "
    "--timeout 30 --slow-rank 1000"
)  # fmt: skip (rank speeds: not judged on 2 busy CPUs)


@pytest.fixture(scope="session")
def cluster() -> Iterator[slurm.Cluster]:
    """One cluster for the session, stopped at its end."""
    reason = slurm.why_not()
    if reason:
        if os.environ.get("NEURON_ENV_TEST_REQUIRE_SLURM"):
            pytest.fail(f"the real Slurm tests must run here, but: {reason}")
        pytest.skip(f"real Slurm tests not run: {reason}")
    root = Path(tempfile.mkdtemp(prefix="neuron-env-slurm-"))  # short: munge's socket path
    try:
        running = slurm.start(root)
    except slurm.ClusterUnavailable as exc:
        shutil.rmtree(root, ignore_errors=True)
        pytest.fail(f"the Slurm cluster did not start: {exc}")
    yield running
    slurm.stop(running)
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="session")
def as_nobody(torch_python: Path) -> Iterator[dict[str, str]]:
    """Settings for a job of ``nobody``, a user without Slurm operator rights: the system's
    interpreter of this Python's version, which any user can run (this one, and the venvs made
    from it, may live under a home other users cannot enter), seeing neuron-env, its
    dependencies and torch through PYTHONPATH."""
    system = Path(f"/usr/bin/python{sys.version_info.major}.{sys.version_info.minor}")
    assert system.exists(), f"the jobs of nobody need {system}, this Python's version"
    torch_site = subprocess.run(
        [str(torch_python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    folder = Path(tempfile.mkdtemp(prefix="neuron-env-nobody-"))
    folder.chmod(0o755)
    tool = folder / "neuron-env"
    tool.write_text(f"#!/bin/sh\nexec {system} -c 'import sys; from neuron_env.cli import main; "
                    f"sys.argv[0] = \"neuron-env\"; sys.exit(main())' \"$@\"\n")  # fmt: skip
    tool.chmod(0o755)
    path = [str(FAULTS), str(REPO), sysconfig.get_paths()["purelib"], torch_site]
    yield {"PYTHON": str(system), "NEURON_ENV": str(tool), "PYTHONPATH": os.pathsep.join(path),
           "PATH": "/usr/bin:/bin"}  # fmt: skip
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def shared() -> Iterator[Path]:
    """A folder every job's user can write (the jobs of ``nobody`` too): reports, outputs."""
    folder = Path(tempfile.mkdtemp(prefix="neuron-env-slurm-job-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def clean_nodes(cluster: slurm.Cluster) -> Iterator[slurm.Cluster]:
    """The cluster, its nodes in service again and no Prolog after the test."""
    yield cluster
    (cluster.root / "prolog-hook").unlink(missing_ok=True)
    cluster.run("scancel", "--user=root", check=False)
    cluster.run("scancel", "--user=nobody", check=False)
    cluster.resume()


def render_check(folder: Path, scenario: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """The health check `preflight --emit slurm-healthcheck` renders for a scenario's host, in a
    wrapper that counts its runs, and the environment it needs (the scenario's IMDS, matrix)."""
    where = folder / scenario
    for host in scenario_host(scenario, where):
        env = host.env  # the scenario's IMDS and matrix
        script = slurm.write_healthcheck(host, where)
        # A wrapper that counts its runs (node and task) and gives the check its environment,
        # as the Prolog, which slurmd runs with its own environment, needs.
        wrapper = where / "counted-healthcheck.sh"
        exports = "".join(f"export {k}={shlex.quote(v)}\n" for k, v in env.items())
        wrapper.write_text(
            "#!/bin/sh\n"
            + exports
            # what neuron-env remembers between runs: beside the check, one folder per user,
            # not in the home of whoever runs the tests (the Prolog has root's)
            + f'export XDG_CACHE_HOME={shlex.quote(str(where))}/cache-"$(id -u)"\n'
            + f'echo "${{SLURMD_NODENAME:-?}} ${{SLURM_PROCID:-prolog}}" >>{where}/runs\n'
            + f"exec {script}\n"
        )
        for path in (script, wrapper):
            path.chmod(0o755)
        for path in (where, *where.rglob("*")):  # the jobs of nobody read it too
            if not path.is_symlink():  # host trees hold links, some dangling as on real hosts
                path.chmod(path.stat().st_mode | 0o055)
        where.chmod(0o777)  # where the wrapper counts its runs
        yield wrapper, env


@pytest.fixture
def healthy_check(shared: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    yield from render_check(shared, "healthy-trn2-ubuntu-26.04")


@pytest.fixture
def broken_check(shared: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    yield from render_check(shared, "driver-not-loaded")


def submit(
    cluster: slurm.Cluster,
    shared: Path,
    torch_python: Path,
    *,
    nodes: int = 2,
    tasks_per_node: int = 1,
    user: str | None = None,
    train: tuple[str, ...] = (),
    env: dict[str, str] | None = None,
    **settings: str,
) -> tuple[dict[str, str], str]:
    """The job script through the real sbatch with ``settings`` exported in the submitting
    environment; the finished job's fields and its output."""
    full = {
        "PATH": f"{NEURON_ENV.parent}:/usr/bin:/bin", "HOME": str(shared),
        "PYTHON": str(torch_python), "NEURON_ENV": str(NEURON_ENV),
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(slurm._free_ports(1)[0]),
        "REPORT_DIR": str(shared / "reports"), "TASKS_PER_NODE": str(tasks_per_node),
        "NEURON_ENV_COLLECTIVES_ARGS": SMALL, "HEALTHCHECK": "none",
        "PYTHONPATH": os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH")) if p),
        **(env or {}), **settings,
    }  # fmt: skip
    argv = ["sbatch", "--parsable", f"--nodes={nodes}", f"--ntasks-per-node={tasks_per_node}",
            f"--output={shared}/job-%j.out", "--export=ALL", str(SBATCH), *train]  # fmt: skip
    job = cluster.run(*argv, user=user, env=full).stdout.strip().split(";")[0]
    fields = cluster.wait_for_job(job)
    out = shared / f"job-{job}.out"
    return fields, out.read_text() if out.exists() else ""


def runs(check: Path) -> list[str]:
    file = check.parent / "runs"
    return file.read_text().splitlines() if file.exists() else []


def test_the_health_check_runs_once_per_node_and_lists_pass_through_sbatch_whole(
    clean_nodes: slurm.Cluster,
    shared: Path,
    torch_python: Path,
    healthy_check: tuple[Path, dict[str, str]],
) -> None:
    check, _ = healthy_check
    fields, out = submit(clean_nodes, shared, torch_python, tasks_per_node=2,
                         train=("echo", "training"), HEALTHCHECK=str(check))  # fmt: skip
    assert fields["JobState"] == "COMPLETED" and fields["ExitCode"] == "0:0", out
    assert sorted(line.split()[0] for line in runs(check)) == ["n1", "n2"]  # 2 runs, 4 tasks
    report = json.loads((shared / "reports" / "rank-0.json").read_text())
    assert report["status"] == "ok" and report["world_size"] == 4
    sizes = sorted({r["size"] for r in report["rows"]})
    assert sizes == [8, 1024, 65536]  # "--sizes 8,1024,65536" arrived whole
    assert "neuron-env collectives: ok on 2 node(s)" in out
    assert out.splitlines().count("training") == 4  # the training step: every task


def test_the_node_of_a_rank_returning_wrong_data_is_drained_by_the_real_scontrol(
    clean_nodes: slurm.Cluster, shared: Path, torch_python: Path
) -> None:
    fields, out = submit(clean_nodes, shared, torch_python, train=("echo", "training"),
                         COLLECTIVES_FAULT="wrong", COLLECTIVES_FAULT_RANK="1")  # fmt: skip
    assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "1:0", out
    node = clean_nodes.show("node", "n2")
    assert "DRAIN" in node["State"]
    assert node["Reason"].startswith("neuron-env")  # scontrol shows the reason's first word
    detail = clean_nodes.run("sinfo", "-R", "--noheader", "-o", "%N|%E").stdout
    assert "n2|neuron-env collectives: wrong: all_reduce at 1024 B: rank 1 returned" in detail
    assert "DRAIN" not in clean_nodes.show("node", "n1")["State"]
    assert "1 node(s) drained, 0 could not be drained" in out and "training" not in out


def test_a_user_who_is_not_an_operator_is_told_the_node_could_not_be_drained_and_why(
    clean_nodes: slurm.Cluster, shared: Path, torch_python: Path, as_nobody: dict[str, str]
) -> None:
    fields, out = submit(clean_nodes, shared, torch_python, user="nobody", env=as_nobody,
                         COLLECTIVES_FAULT="wrong", COLLECTIVES_FAULT_RANK="1")  # fmt: skip
    assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "1:0", out
    assert "could not drain n2: scontrol said: " in out
    assert "0 node(s) drained, 1 could not be drained" in out
    assert "drained n2" not in out
    printed = [line for line in out.splitlines() if line.startswith("  scontrol update ")]
    assert shlex.split(printed[0])[:4] == ["scontrol", "update", "nodename=n2", "state=drain"]
    assert "DRAIN" not in clean_nodes.show("node", "n2")["State"]


def test_a_health_check_that_cannot_drain_says_so_and_the_job_stops(
    clean_nodes: slurm.Cluster,
    shared: Path,
    torch_python: Path,
    broken_check: tuple[Path, dict[str, str]],
    as_nobody: dict[str, str],
) -> None:
    check, _ = broken_check
    fields, out = submit(clean_nodes, shared, torch_python, user="nobody", tasks_per_node=2,
                         HEALTHCHECK=str(check), env=as_nobody)  # fmt: skip
    assert fields["JobState"] == "FAILED" and fields["ExitCode"] == "1:0", out
    assert len(runs(check)) == 2  # once per node, though the job has four tasks
    for node in ("n1", "n2"):
        assert (f"neuron-env-healthcheck: could not drain {node}: scontrol said: ") in out
        assert "DRAIN" not in clean_nodes.show("node", node)["State"]
    assert "; the node failed: neuron-env" in out, out  # what preflight found, as nobody
    assert "collectives and training did not run" in out
    assert not (shared / "reports").exists()


def test_a_failing_prolog_drains_the_node_and_slurm_requeues_the_job_held(
    clean_nodes: slurm.Cluster, shared: Path, broken_check: tuple[Path, dict[str, str]]
) -> None:
    check, _ = broken_check
    (clean_nodes.root / "prolog-hook").symlink_to(check)
    script = shared / "job.sh"
    script.write_text("#!/bin/sh\necho ran\n")
    job = clean_nodes.run("sbatch", "--parsable", "--nodes=1", f"--output={shared}/%j.out",
                          str(script)).stdout.strip()  # fmt: skip
    fields = clean_nodes.wait_for_job(job)
    assert fields["JobState"] == "PENDING"  # not failed, not run: requeued and held
    assert fields["Reason"] == "launch_failed_requeued_held"
    assert int(fields["Restarts"]) >= 1
    drained = clean_nodes.run("sinfo", "-R", "--noheader", "-o", "%N|%E").stdout
    assert "neuron-env: driver.module,driver.devices" in drained or "Prolog error" in drained
    assert not (shared / f"{job}.out").exists() or "ran" not in (shared / f"{job}.out").read_text()
    clean_nodes.run("scancel", job)


def test_ranks_on_nodes_with_different_neuron_rt_root_comm_id_are_named_and_nothing_runs(
    clean_nodes: slurm.Cluster, shared: Path, torch_python: Path
) -> None:
    fields, out = submit(clean_nodes, shared, torch_python, train=("echo", "training"),
                         NEURON_RT_ROOT_COMM_ID="10.0.0.1:62182", COLLECTIVES_FAULT="comm-id",
                         COLLECTIVES_FAULT_RANK="1",
                         COLLECTIVES_FAULT_VALUE="10.0.0.2:62182")  # fmt: skip
    assert fields["ExitCode"] == "1:0", out
    report = json.loads((shared / "reports" / "rank-0.json").read_text())
    (failure,) = report["failures"]
    assert failure["kind"] == "env" and failure["rank"] == 1
    assert (
        "NEURON_RT_ROOT_COMM_ID differs across ranks ('10.0.0.1:62182' on rank 0; "
        in (failure["message"])
    )
    assert report["rows"] == [] and "training" not in out
    drained = clean_nodes.run("sinfo", "-R", "--noheader", "-o", "%N|%E").stdout
    assert drained == "", drained  # the nodes' setting, not a broken node: none drained


def test_a_rank_killed_under_srun_is_named_by_its_own_report_and_its_node_drained(
    clean_nodes: slurm.Cluster, shared: Path, torch_python: Path
) -> None:
    fields, out = submit(clean_nodes, shared, torch_python, train=("echo", "training"),
                         NEURON_ENV_COLLECTIVES_ARGS=SMALL.replace("--timeout 30", "--timeout 5"),
                         COLLECTIVES_FAULT="crash", COLLECTIVES_FAULT_RANK="1",
                         COLLECTIVES_FAULT_COUNT="256")  # fmt: skip
    assert fields["ExitCode"] == "1:0", out
    own = json.loads((shared / "reports" / "rank-1.json").read_text())
    (crash,) = [f for f in own["failures"] if f["kind"] == "crash"]
    assert crash["rank"] == 1 and crash["message"].startswith("rank 1 on ")
    assert "was killed by signal SIGKILL" in crash["message"]
    peer = json.loads((shared / "reports" / "rank-0.json").read_text())
    (hang,) = [f for f in peer["failures"] if f["kind"] == "hang"]
    assert hang["rank"] == 1  # rank 0's collective failed, and it named the rank that left
    assert hang["message"].startswith("all_reduce at 1024 B: rank 1 left the job (no heartbeat")
    drained = clean_nodes.run("sinfo", "-R", "--noheader", "-o", "%N|%E").stdout
    assert drained.startswith("n2|neuron-env collectives: ") and "n1|" not in drained
    assert "training" not in out
