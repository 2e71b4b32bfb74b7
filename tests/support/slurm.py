"""A real Slurm cluster on 127.0.0.1 for the tests: munged, slurmctld and two slurmd.

The OS packages (``slurm-wlm``, ``munge``; scripts/test.sh installs them as root) are run as they
ship, each daemon with files under one temporary folder: a fresh munge key and socket, a generated
``slurm.conf``, state and spool folders, logs. The two slurmd are two nodes, ``n1`` and ``n2``, on
this one host (the Debian build runs one slurmd per ``-N`` name, each on its own port; verified
with slurm-wlm 22.05.8 here), so a job on ``--nodes=2`` has two nodes as on a real cluster.

There is no slurmdbd (a database daemon, too heavy for a test run), so ``sacct`` has no records:
results are read from ``scontrol show job`` (finished jobs are kept for an hour, ``MinJobAge``) and
from the jobs' output files. The Prolog is a fixed script that runs ``prolog-hook`` in the
cluster's folder when a test has put one there, so a test can give the nodes a Prolog without a
restart.
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.cli import NEURON_ENV, machine_env

if TYPE_CHECKING:
    from tests.support.hosts import Host

NODES = ("n1", "n2")
CPUS = 4  # per node: more than this machine has is fine (config_overrides)
DAEMONS = ("munged", "slurmctld", "slurmd", "sbatch", "srun", "scontrol")


class ClusterUnavailable(Exception):
    """This machine cannot run the cluster; the message says why."""


def why_not() -> str | None:
    """Why the cluster cannot start here, or None when it can."""
    missing = [tool for tool in DAEMONS if shutil.which(tool) is None]
    if missing:
        return (f"Slurm is not installed ({', '.join(missing)} missing): scripts/test.sh "
                "installs slurm-wlm and munge when run as root")  # fmt: skip
    if os.geteuid() != 0:
        return "the Slurm daemons run as root (SlurmUser=root), and these tests are not root"
    return None


def _free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


@dataclass
class Cluster:
    root: Path

    @property
    def env(self) -> dict[str, str]:
        """What a client (sbatch, scontrol) needs to find this cluster."""
        return {"SLURM_CONF": str(self.root / "slurm.conf")}

    def run(self, *argv: str, user: str | None = None, check: bool = True,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:  # fmt: skip
        """A Slurm client command, as ``user`` when given (through setpriv)."""
        prefix = []
        if user:
            account = pwd.getpwnam(user)
            prefix = ["setpriv", f"--reuid={account.pw_uid}", f"--regid={account.pw_gid}",
                      "--clear-groups"]  # fmt: skip
        full = {**os.environ, **(env or {}), **self.env}
        return subprocess.run([*prefix, *argv], env=full, capture_output=True, text=True,
                              check=check, timeout=60)  # fmt: skip

    def show(self, kind: str, name: str) -> dict[str, str]:
        """``scontrol show KIND NAME`` as a dictionary of its fields."""
        text = self.run("scontrol", "show", kind, name, "--oneliner").stdout
        return dict(field.split("=", 1) for field in text.split() if "=" in field)

    def wait_for_job(self, job: str, timeout: float = 240) -> dict[str, str]:
        """The job's fields once it has ended (or is held: a Prolog failed)."""
        deadline = time.monotonic() + timeout
        while True:
            fields = self.show("job", job)
            ended = fields["JobState"] not in ("PENDING", "RUNNING", "CONFIGURING", "COMPLETING")
            if ended or "held" in fields.get("Reason", ""):
                return fields
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job} still {fields['JobState']} after {timeout} s")
            time.sleep(0.5)

    def resume(self) -> None:
        """Every node back in service (a test drained one)."""
        self.run("scontrol", "update", f"nodename={','.join(NODES)}", "state=resume", check=False)
        self.wait_for_idle()

    def wait_for_idle(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while True:
            states = [self.show("node", n).get("State", "") for n in NODES]
            if all(s.startswith("IDLE") and "DRAIN" not in s for s in states):
                return
            if time.monotonic() > deadline:
                raise ClusterUnavailable(f"the nodes did not become idle: {states}")
            time.sleep(0.3)


def _conf(root: Path, ports: list[int]) -> str:
    nodes = "\n".join(
        f"NodeName={name} NodeHostname=localhost NodeAddr=127.0.0.1 Port={port} CPUs={CPUS} "
        f"RealMemory=1000 State=UNKNOWN"
        for name, port in zip(NODES, ports[1:], strict=True)
    )
    return f"""\
ClusterName=neuronenvtest
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort={ports[0]}
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket={root}/munge.sock
StateSaveLocation={root}/state
SlurmdSpoolDir={root}/spool-%n
SlurmctldPidFile={root}/slurmctld.pid
SlurmdPidFile={root}/slurmd-%n.pid
SlurmctldLogFile={root}/slurmctld.log
SlurmdLogFile={root}/slurmd-%n.log
SlurmdParameters=config_overrides
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MinJobAge=3600
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
Prolog={root}/prolog.sh
{nodes}
PartitionName=test Nodes={",".join(NODES)} Default=YES MaxTime=INFINITE State=UP
"""


def start(root: Path) -> Cluster:
    """Start munged, slurmctld and the slurmd of each node under ``root``; wait for them."""
    reason = why_not()
    if reason:
        raise ClusterUnavailable(reason)
    root.chmod(0o755)  # jobs of other users write their output under it
    (root / "state").mkdir()
    key = root / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    (root / "slurm.conf").write_text(_conf(root, _free_ports(1 + len(NODES))))
    prolog = root / "prolog.sh"
    prolog.write_text(
        f'#!/bin/sh\nhook={root}/prolog-hook\n[ -x "$hook" ] && exec "$hook"\nexit 0\n'
    )
    prolog.chmod(0o755)
    conf = str(root / "slurm.conf")
    _daemon("munged", "--force", f"--socket={root}/munge.sock", f"--key-file={key}",
            f"--log-file={root}/munged.log", f"--pid-file={root}/munged.pid",
            f"--seed-file={root}/munged.seed")  # fmt: skip
    _daemon("slurmctld", "-f", conf)
    for name in NODES:
        _daemon("slurmd", "-f", conf, "-N", name)
    cluster = Cluster(root)
    cluster.wait_for_idle()
    return cluster


def _daemon(*argv: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    if done.returncode != 0:
        raise ClusterUnavailable(f"{argv[0]} did not start: {done.stderr.strip()}")


def stop(cluster: Cluster) -> None:
    """Stop the daemons (slurmctld tells each slurmd), then munged; wait for each to end."""
    cluster.run("scontrol", "shutdown", check=False)
    for pid_file in sorted(cluster.root.glob("slurm*.pid")):
        _wait_gone(_pid(pid_file))
    munged = _pid(cluster.root / "munged.pid")
    if munged:
        os.kill(munged, signal.SIGTERM)
        _wait_gone(munged)


def _pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip())
    except (OSError, ValueError):
        return None


def _wait_gone(pid: int | None, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while pid is not None and time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            return
        if state == "Z":
            return
        time.sleep(0.2)
    if pid is not None:
        os.kill(pid, signal.SIGKILL)


def write_healthcheck(host: Host, where: Path) -> Path:
    """``where/healthcheck.sh``, executable: the node health check that ``preflight --emit
    slurm-healthcheck`` renders for ``host``."""
    rendered = subprocess.run(
        [str(NEURON_ENV), "preflight", "--emit", "slurm-healthcheck", *host.probe()],
        env={**machine_env(), **host.env}, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    script = where / "healthcheck.sh"
    script.write_text(rendered.stdout)
    script.chmod(0o755)
    return script
