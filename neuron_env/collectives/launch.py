"""Where the ranks come from: a launcher's variables (torchrun, srun, mpirun), or torchrun
started here on one host. Pure functions, except :func:`free_port`."""

from __future__ import annotations

import socket
from collections.abc import Mapping
from pathlib import Path

from neuron_env.errors import BadInput
from neuron_env.worker.session import worker_argv

WORKER_DIR = Path(__file__).resolve().parent / "worker"

# (rank, world size, local rank) as each launcher names them; torchrun's first.
LAUNCHERS = (
    ("torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK"),
    ("srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"),
    ("mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"),
)


def rank_env(environ: Mapping[str, str]) -> dict[str, str] | None:
    """RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT from the launcher's variables, or
    None when no launcher started this process."""
    for name, rank, world, local in LAUNCHERS:
        if rank in environ and world in environ:
            return {
                "RANK": environ[rank],
                "WORLD_SIZE": environ[world],
                "LOCAL_RANK": environ.get(local, "0"),
                **_rendezvous(environ, name),
            }
    return None


def _rendezvous(environ: Mapping[str, str], launcher: str) -> dict[str, str]:
    missing = [k for k in ("MASTER_ADDR", "MASTER_PORT") if not environ.get(k)]
    if missing:
        raise BadInput(
            f"Started by {launcher}, but {' and '.join(missing)} is not set: the ranks cannot "
            "find each other.",
            hint="Export the first host and a free port before the launcher, e.g. "
            'MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n1) '
            "MASTER_PORT=29500.",
        )
    return {"MASTER_ADDR": environ["MASTER_ADDR"], "MASTER_PORT": environ["MASTER_PORT"]}


def torchrun_argv(python: Path, nproc: int, port: int, request: str) -> list[str]:
    """torchrun of the target interpreter, ``nproc`` ranks on this host (127.0.0.1)."""
    return [
        str(python), "-m", "torch.distributed.run", "--nnodes", "1",
        "--nproc-per-node", str(nproc), "--master-addr", "127.0.0.1",
        "--master-port", str(port), *worker_argv(python, WORKER_DIR)[1:], request,
    ]  # fmt: skip


def direct_argv(python: Path, request: str) -> list[str]:
    """This rank's worker, started by the launcher that started neuron-env."""
    return [*worker_argv(python, WORKER_DIR), request]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
