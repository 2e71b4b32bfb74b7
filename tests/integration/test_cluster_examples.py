"""The cluster examples for ``neuron-env collectives``: the Slurm job script runs for real under
stand-ins for ``srun`` and ``scontrol`` (tests/fakes/slurm: tasks on this machine, the calls
recorded), with real ranks on gloo and a fault injected into one; the Kubernetes manifests are
checked against a schema of the API fields they use (tests/data/kubernetes)."""

from __future__ import annotations

import copy
import json
import os
import shlex
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from tests.support.cli import DATA, NEURON_ENV, REPO, machine_env
from tests.support.hosts import scenario_host
from tests.support.slurm import write_healthcheck
from tests.support.validators import assert_shellcheck_clean

pytestmark = pytest.mark.integration

SBATCH = REPO / "examples" / "slurm" / "collectives-preflight.sbatch"
FAKE_SLURM = REPO / "tests" / "fakes" / "slurm"
FAULTS = REPO / "tests" / "fakes" / "collectives_faults"
MANIFESTS = sorted((REPO / "examples" / "kubernetes").glob("*.yaml"))
SCHEMA = json.loads((DATA / "kubernetes" / "workloads.schema.json").read_text())
# Rank speeds are not judged here (slow-rank has its own test): a busy machine skews them.
SMALL = (
    "--backend gloo --sizes 8,1024,65536 --iters 3 --warmup 1 --ops all_reduce,broadcast "
    "--slow-rank 1000"
)


# --- Slurm --------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def healthcheck(tmp_path: Path, scenario: str) -> Iterator[tuple[Path, dict[str, str]]]:
    """The node health check as `preflight --emit slurm-healthcheck` renders it for a host."""
    where = tmp_path / scenario
    for host in scenario_host(scenario, where):
        yield write_healthcheck(host, where), {**machine_env(), **host.env}


@pytest.fixture
def healthy_node(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    yield from healthcheck(tmp_path, "healthy-trn2-ubuntu-26.04")


@pytest.fixture
def broken_node(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    yield from healthcheck(tmp_path, "driver-not-loaded")


def sbatch(
    tmp_path: Path,
    torch_python: Path,
    node: tuple[Path, dict[str, str]],
    *train: str,
    **env: str,
) -> tuple[subprocess.CompletedProcess[str], list[list[str]], list[list[str]]]:
    """The job script on two nodes of one task each; its result, srun's and scontrol's calls."""
    log = tmp_path / "slurm"
    log.mkdir(exist_ok=True)
    script, base = node
    full = {
        **base, "PATH": f"{FAKE_SLURM}:{NEURON_ENV.parent}:/usr/bin:/bin",
        "FAKE_SLURM_LOG": str(log), "SLURM_JOB_NODELIST": "trn-a,trn-b", "SLURM_JOB_ID": "42",
        "SLURM_SUBMIT_DIR": str(tmp_path), "HEALTHCHECK": str(script), "TASKS_PER_NODE": "1",
        "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(free_port()), "PYTHON": str(torch_python),
        "NEURON_ENV": str(NEURON_ENV), "NEURON_ENV_COLLECTIVES_ARGS": SMALL,
        "PYTHONPATH": os.pathsep.join(p for p in (str(FAULTS), os.environ.get("PYTHONPATH")) if p),
        **env,
    }  # fmt: skip
    done = subprocess.run(["bash", str(SBATCH), *train], env=full, capture_output=True,
                          text=True, timeout=300, check=False)  # fmt: skip
    sruns = [json.loads(line) for line in _lines(log / "srun.jsonl")]
    updates: list[list[str]] = []
    current: list[str] = []
    for line in _lines(log / "scontrol.args"):
        if line == "--":
            updates.append(current)
            current = []
        else:
            current.append(line)
    return done, sruns, updates


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_the_job_script_passes_shellcheck() -> None:
    subprocess.run(["bash", "-n", str(SBATCH)], check=True)
    assert_shellcheck_clean(SBATCH, FAKE_SLURM / "scontrol")


def test_healthy_nodes_pass_both_checks_and_the_training_step_runs(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    done, sruns, updates = sbatch(tmp_path, torch_python, healthy_node, "echo", "training")
    assert done.returncode == 0, done.stdout + done.stderr
    assert [s[:2] for s in sruns[:2]] == [
        ["--ntasks=2", "--ntasks-per-node=1"],
        ["--ntasks-per-node=1", "--kill-on-bad-exit=0"],
    ]
    assert sruns[2][0] == "echo"  # then the training step
    assert sruns[0][-1] == str(healthy_node[0])  # the health check, once per node
    assert "neuron-env collectives: ok on 2 node(s)" in done.stdout
    assert done.stdout.splitlines()[-2:] == ["training", "training"]  # once per node
    assert updates == []
    report = json.loads((tmp_path / "neuron-env-collectives-42" / "rank-0.json").read_text())
    assert report["status"] == "ok" and report["world_size"] == 2


def test_the_node_of_the_rank_returning_wrong_data_is_drained_and_training_never_starts(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    fault = {"COLLECTIVES_FAULT": "wrong", "COLLECTIVES_FAULT_RANK": "1"}
    done, sruns, updates = sbatch(tmp_path, torch_python, healthy_node, "echo", "training", **fault)
    assert done.returncode == 1
    assert len(updates) == 1  # rank 1 ran on the second node, and only it is drained
    command, node, state, reason = updates[0]
    assert (command, node, state) == ("update", "nodename=trn-b", "state=drain")
    kinds, _, said = reason.removeprefix("reason=neuron-env collectives: ").partition(": ")
    assert kinds == "wrong"
    assert said.startswith("all_reduce at 1024 B: rank 1 returned 1 wrong element(s), the first "
                           "at index 5")  # fmt: skip
    assert len(reason) <= len("reason=") + 200
    assert "echo" not in [s[0] for s in sruns] and "training" not in done.stdout
    assert "1 node(s) drained" in done.stderr


def test_a_hung_rank_s_node_is_drained(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    env = {"NEURON_ENV_COLLECTIVES_ARGS": f"{SMALL} --timeout 5", "COLLECTIVES_FAULT": "hang",
           "COLLECTIVES_FAULT_RANK": "0", "COLLECTIVES_FAULT_COUNT": "256"}  # fmt: skip
    done, _, updates = sbatch(tmp_path, torch_python, healthy_node, **env)
    assert done.returncode == 1
    assert [u[1] for u in updates] == ["nodename=trn-a"]
    kinds, _, said = updates[0][3].removeprefix("reason=neuron-env collectives: ").partition(": ")
    assert kinds == "hang"  # the hang skews the others' times: no slow-rank on the other node
    assert said.startswith("all_reduce at 1024 B: rank 0 did not answer within 5 s")


def test_without_operator_rights_the_node_is_named_for_the_admin_and_the_job_still_fails(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    done, _, updates = sbatch(tmp_path, torch_python, healthy_node, "echo", "training",
                              COLLECTIVES_FAULT="wrong", COLLECTIVES_FAULT_RANK="0",
                              FAKE_SCONTROL_DENIED="1")  # fmt: skip
    assert done.returncode == 1 and "training" not in done.stdout
    assert [u[1] for u in updates] == ["nodename=trn-a"]
    assert (
        "could not drain trn-a: scontrol said: slurm_update error: Invalid user id "
        "(draining needs Slurm operator rights)"
    ) in done.stderr
    assert "0 node(s) drained, 1 could not be drained" in done.stderr
    (printed,) = [ln for ln in done.stderr.splitlines() if ln.startswith("  scontrol update ")]
    assert shlex.split(printed) == ["scontrol", *updates[0][:4]]  # pastes as the same command


def test_a_node_failing_preflight_is_drained_by_the_health_check_before_any_collective(
    tmp_path: Path, torch_python: Path, broken_node: tuple[Path, dict[str, str]]
) -> None:
    done, sruns, updates = sbatch(tmp_path, torch_python, broken_node, "echo", "training")
    assert done.returncode == 1
    assert len(sruns) == 1  # the health check's step only: no collectives, no training
    assert sorted(u[1] for u in updates) == ["nodename=trn-a", "nodename=trn-b"]
    assert {u[3] for u in updates} == {"reason=neuron-env: driver.module,driver.devices"}
    assert "neuron-env preflight failed on at least one node" in done.stderr


def test_a_failure_no_rank_owns_drains_nothing(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    # Low busbw against a link no gloo reaches: a failure of the job's figures, not of a rank.
    args = ("--backend gloo --ops all_reduce --sizes 64M --iters 1 --warmup 0 "
            "--peak-gbps 1000000 --min-busbw-ratio 0.9")  # fmt: skip
    done, _, updates = sbatch(
        tmp_path, torch_python, healthy_node, NEURON_ENV_COLLECTIVES_ARGS=args
    )
    assert done.returncode == 1
    assert updates == []
    assert "no failure names a rank, so none names a node; none drained" in done.stderr
    assert "0 node(s) drained, 0 could not be drained" in done.stderr


def test_a_job_interpreter_without_torch_is_a_setup_error_before_any_rank_runs(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    args = f"{SMALL} --python /usr/bin/python3"
    done, _, updates = sbatch(
        tmp_path, torch_python, healthy_node, NEURON_ENV_COLLECTIVES_ARGS=args
    )
    assert done.returncode == 2 and updates == []
    assert "has no torch: the ranks of collectives run in that interpreter" in done.stderr
    assert "neuron-env collectives refused its arguments (exit 2)" in done.stderr


def test_a_missing_health_check_is_a_setup_error(
    tmp_path: Path, torch_python: Path, healthy_node: tuple[Path, dict[str, str]]
) -> None:
    done, sruns, _ = sbatch(tmp_path, torch_python, healthy_node, HEALTHCHECK=str(tmp_path / "x"))
    assert done.returncode == 2 and sruns == []
    assert "neuron-env preflight --emit slurm-healthcheck --python" in done.stderr


# --- Kubernetes ---------------------------------------------------------------------------------

VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    spec = doc["spec"]["template"]["spec"] if "template" in doc["spec"] else doc["spec"]
    return [*spec.get("initContainers", []), *spec.get("containers", [])]


def schema_errors(doc: dict[str, Any]) -> list[str]:
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(doc)
    ]


def without_neuron(doc: dict[str, Any]) -> list[str]:
    """Containers that do not ask the device plugin for Neuron devices in their limits."""
    limits = [(c["name"], c.get("resources", {}).get("limits", {})) for c in containers(doc)]
    return [name for name, limit in limits if not limit.get("aws.amazon.com/neuron")]


def test_the_schema_is_a_valid_json_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.name)
def test_every_kubernetes_example_matches_the_api_schema(manifest: Path) -> None:
    for doc in documents(manifest):
        assert schema_errors(doc) == [], manifest.name


@pytest.mark.parametrize("manifest", MANIFESTS, ids=lambda p: p.name)
def test_every_pod_on_trainium_requests_neuron_devices_in_its_limits(manifest: Path) -> None:
    for doc in documents(manifest):
        if doc["kind"] == "Service" or manifest.name == "facts-daemonset.yaml":
            continue  # facts reads the host's files through /host: it needs no device
        assert without_neuron(doc) == [], manifest.name


def test_the_collectives_job_runs_one_indexed_pod_per_node_behind_a_headless_service() -> None:
    service, job = documents(REPO / "examples" / "kubernetes" / "collectives-job.yaml")
    spec = job["spec"]
    assert spec["completionMode"] == "Indexed"
    assert spec["completions"] == spec["parallelism"]  # every rank at once
    pod = spec["template"]
    assert service["spec"]["clusterIP"] == "None"
    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert pod["spec"]["subdomain"] == service["metadata"]["name"]
    (container,) = pod["spec"]["containers"]
    command = container["command"]
    nodes = int(next(a for a in command if a.startswith("--nnodes=")).split("=")[1])
    assert nodes == spec["completions"]
    master = f"--master-addr={job['metadata']['name']}-0.{service['metadata']['name']}"
    assert master in command and "--node-rank=$(JOB_COMPLETION_INDEX)" in command
    assert command[command.index("--no-python") + 1 :][:2] == ["neuron-env", "collectives"]
    assert container["resources"]["limits"]["vpc.amazonaws.com/efa"] == 16


def _job() -> dict[str, Any]:
    return copy.deepcopy(documents(REPO / "examples" / "kubernetes" / "collectives-job.yaml")[1])


CONTAINER = ("spec", "template", "spec", "containers", 0)


@pytest.mark.parametrize(
    ("where", "field", "typo", "expected"),
    [
        (("spec",), "completionMode", "completionmode", "'completionmode' was unexpected"),
        (CONTAINER, "resources", "resource", "'resource' was unexpected"),
        ((*CONTAINER, "resources"), "limits", "limts", "'limts' was unexpected"),
        (("spec",), "completionMode", None, "'indexed' is not one of"),
        (("spec", "template", "spec"), "restartPolicy", None, "'Always' is not one of"),
    ],
    ids=["completionmode", "resource", "limts", "indexed", "restart-always"],
)
def test_a_typo_in_a_manifest_fails_the_schema(
    where: tuple[str | int, ...], field: str, typo: str | None, expected: str
) -> None:
    job = _job()
    parent: Any = job
    for key in where:
        parent = parent[key]
    if typo:
        parent[typo] = parent.pop(field)
    else:  # a wrong value instead: lower case, or a restart policy no Job may have
        parent[field] = "indexed" if field == "completionMode" else "Always"
    errors = schema_errors(job)
    assert any(expected in e for e in errors), errors


def test_a_container_without_neuron_limits_is_named() -> None:
    job = _job()
    del job["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]
    assert without_neuron(job) == ["collectives"]
