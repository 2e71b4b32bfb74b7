"""Device runs refuse to start on NeuronCores another process holds.

The runtime takes every core a process is allowed, so a smoke test, self-test or evaluation
started beside a training job fails with no core free, or worse, takes the cores a job is about
to use. Before a run on the ``neuron`` device the host's ``/proc`` is read for processes holding
``/dev/neuron*`` (as ``fuser`` does; ``neuron-ls`` is not run, to start quickly); the words are
the doctor's ``driver.cores-held``. A ``NEURON_RT_VISIBLE_CORES`` that keeps to free devices lets
the run start.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from neuron_env.checks.cores import LNC, VISIBLE, held_verdict, logical_cores
from neuron_env.checks.model import Verdict
from neuron_env.errors import OperationFailed
from neuron_env.facts import DriverFacts, EnvFacts, HostFacts
from neuron_env.matrix import load_matrix
from neuron_env.probe.driver import device_nodes, sysfs_devices
from neuron_env.probe.holders import device_holders
from neuron_env.probe.sysroot import Sysroot


def held_cores(
    sysroot: Path = Path("/"),
    environ: Mapping[str, str] | None = None,
    matrix_dirs: Sequence[Path] = (),
) -> Verdict | None:
    """The doctor's verdict on held cores when a run here would meet them, else None."""
    holders, unreadable = device_holders(Sysroot.at(sysroot))
    if not holders:
        return None
    env = os.environ if environ is None else environ
    facts = HostFacts(
        collected_at="",
        sysroot=str(sysroot),
        driver=DriverFacts(
            module_loaded=True,
            devices=device_nodes(sysroot),  # in a container: only the devices passed in
            sysfs=sysfs_devices(sysroot),
            holders=holders,
            holders_unreadable=unreadable,
        ),
        env=EnvFacts(variables={k: env[k] for k in (VISIBLE, LNC) if k in env}),
    )
    verdict = held_verdict(facts, logical_cores(facts, load_matrix(list(matrix_dirs)).latest()))
    return verdict if verdict.status == "warn" else None


def device_run_target(python: Path | None, device: str, matrix_dirs: Sequence[Path] = ()) -> Path:
    """The interpreter a device run (smoke, selftest, evaluate) starts its worker in, once the
    device is one neuron-env knows and, on ``neuron``, no other process holds its cores: bad input
    and held cores are said before any worker starts."""
    from neuron_env.probe.python_env import find_target_python
    from neuron_env.worker.devices import check_device

    check_device(device)
    target = find_target_python(python)
    refuse_on_held_cores(device, matrix_dirs=matrix_dirs)
    return target


def refuse_on_held_cores(
    device: str, sysroot: Path = Path("/"), matrix_dirs: Sequence[Path] = ()
) -> None:
    """Raise (exit 1) before a run on the ``neuron`` device would meet held cores."""
    if device != "neuron":
        return
    verdict = held_cores(sysroot, matrix_dirs=matrix_dirs)
    if verdict is not None:
        raise OperationFailed(f"Not started: {verdict.summary}.", hint=verdict.fix)
