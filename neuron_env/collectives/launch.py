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
    None when no launcher started this process. Values that are not a rank of the job, or a
    WORLD_SIZE that another launcher's count contradicts, are bad input."""
    for name, rank, world, local in LAUNCHERS:
        if rank in environ and world in environ:
            size = _count(environ, world, 1)
            number = _count(environ, rank, 0)
            if number >= size:
                raise BadInput(f"{rank}={number} is not a rank of a job of {world}={size} "
                               f"(ranks 0 to {size - 1}).")  # fmt: skip
            _agree(environ, name, size)
            return {
                "RANK": str(number),
                "WORLD_SIZE": str(size),
                "LOCAL_RANK": str(_count(environ, local, 0) if local in environ else 0),
                **_rendezvous(environ, name),
            }
    return None


def _count(environ: Mapping[str, str], name: str, least: int) -> int:
    text = environ[name].strip()
    if not text.isdigit() or int(text) < least:
        raise BadInput(f"{name}={environ[name]!r} is not a whole number of {least} or more.",
                       hint=f"{name} is set by the launcher (torchrun, srun, mpirun); unset a "
                       "value exported by hand.")  # fmt: skip
    return int(text)


def _agree(environ: Mapping[str, str], launcher: str, size: int) -> None:
    """A WORLD_SIZE exported by hand must match the launcher that started the ranks: else the
    ranks wait for peers that never come (or start without them)."""
    by_torchrun = "TORCHELASTIC_RUN_ID" in environ  # torchrun under srun: sizes differ rightly
    for name, _, world, _ in LAUNCHERS:
        if name == launcher or world not in environ or (by_torchrun and launcher == "torchrun"):
            continue
        if launcher != "torchrun" and name != "torchrun":
            continue  # srun's and mpirun's counts: the one that started this process is used
        other = environ[world].strip()
        if other != str(size):
            raise BadInput(
                f"{world}={other!r} disagrees with the {launcher} that started this rank "
                f"({LAUNCHERS_BY_NAME[launcher]}={size}).",
                hint=f"Unset {world} (or set it to {size}); the launcher sets the job's size.",
            )


LAUNCHERS_BY_NAME = {name: world for name, _, world, _ in LAUNCHERS}


def require_torch(python: Path, environ: Mapping[str, str]) -> None:
    """Bad input, before any rank starts, when the ranks' interpreter has no torch."""
    from neuron_env.command import run

    probe = "import importlib.util, sys; sys.exit(0 if importlib.util.find_spec('torch') else 5)"
    done = run([str(python), "-c", probe], timeout=60, env=dict(environ), check=False)
    if done.returncode == 5:
        raise BadInput(
            f"{python} has no torch: the ranks of collectives run in that interpreter.",
            hint="Pass --python PATH of the environment with torch and torch-neuronx "
            "(neuron-env install --torch 2.14 makes one).",
        )
    if done.returncode != 0:
        from neuron_env.facts import PYTHON_PROBE_FLOOR_TEXT, below_probe_floor
        from neuron_env.interpreter import version_of

        version = version_of(python)
        if version is not None and below_probe_floor(version):  # Python 2: no importlib.util
            raise BadInput(f"{python} is Python {version}: the ranks of collectives run on "
                           f"Python {PYTHON_PROBE_FLOOR_TEXT} or later (TorchNeuron needs 3.12 "
                           "or later).",
                           hint="Pass --python PATH of the environment with torch and "
                           "torch-neuronx.")  # fmt: skip
        last = (done.stderr.strip().splitlines() or [f"exit code {done.returncode}"])[-1]
        raise BadInput(f"{python} could not be run: {last}")


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
