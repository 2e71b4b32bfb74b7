"""``doctor``, ``preflight`` and ``facts``: facts, live or from a snapshot, judged by the matrix."""

from __future__ import annotations

import dataclasses
import time
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from neuron_env.doctor.request import DoctorRequest, FactsRequest
from neuron_env.errors import BadInput
from neuron_env.signals import InBackground

if TYPE_CHECKING:
    from neuron_env.checks.model import DoctorReport, Verdict
    from neuron_env.facts import DeviceFacts, HostFacts

__all__ = ["DoctorRequest", "FactsRequest", "levels_held", "probe_host_facts", "run_doctor"]


def run_doctor(request: DoctorRequest) -> DoctorReport:
    """Facts (live or from a snapshot) judged against the matrix.

    Bad input about the matrix, ``--release`` or ``--torch`` is said before bad input about the
    facts; the host is probed while the matrix loads.
    """
    from contextlib import nullcontext

    guard: AbstractContextManager[object] = nullcontext()
    if request.facts.level:
        # The device levels run in the probe's thread, which signals cannot reach: Ctrl-C or
        # SIGTERM here kills their workers, and the run ends with exit 130 once it has returned.
        from neuron_env.worker.interrupts import stop_on_interrupt

        guard = stop_on_interrupt("device test")
    with guard, InBackground(lambda: _facts_for(request)) as host:
        # The host is probed first, while the checks and the matrix load (their imports too).
        from neuron_env.doctor.diagnose import check_request, judge
        from neuron_env.matrix import load_matrix

        options = request.judging
        matrix = load_matrix(list(request.matrix_dirs))
        check_request(matrix, options.release, options.torch)
        facts, chosen_by = host.result()
        return dataclasses.replace(judge(matrix, facts, options), target_chosen_by=chosen_by)


def probe_host_facts(request: FactsRequest) -> HostFacts:
    """This host and the target interpreter's facts, with the device levels' results if asked."""
    return _probe_target(request)[0]


def _probe_target(request: FactsRequest) -> tuple[HostFacts, str]:
    """:func:`probe_host_facts`, and how the target interpreter was chosen (``--python``,
    ``$VIRTUAL_ENV``, ...)."""
    from neuron_env.probe.collect import ProbeOptions, collect_facts
    from neuron_env.probe.python_env import choose_target_python

    if not request.sysroot.is_dir():
        raise BadInput(f"--sysroot {request.sysroot} is not a directory.")
    target, chosen_by = choose_target_python(request.python)
    started = time.monotonic()
    options = ProbeOptions.capped(request.probe_timeout, sysroot=request.sysroot, python=target)
    facts = collect_facts(options)
    return (_with_device(facts, target, request, started) if request.level else facts), chosen_by


def _facts_for(request: DoctorRequest) -> tuple[HostFacts, str]:
    """The facts to judge and how their target was chosen (a snapshot's: ``--facts``)."""
    from neuron_env.facts import read_snapshot

    if request.facts_file is None:
        return _probe_target(request.facts)
    if request.facts.python is not None or request.facts.sysroot != Path("/"):
        raise BadInput(
            "--facts judges a saved snapshot; it cannot be combined with --python or --sysroot."
        )
    snapshot = read_snapshot(request.facts_file)
    recorded, level = levels_held(snapshot), request.facts.level
    if level > recorded:
        raise BadInput(
            f"{request.facts_file} holds level-{recorded} facts; --level {level} needs the device "
            "results.",
            hint=f"Collect them on the host with 'neuron-env facts --level {level} -o FILE'.",
        )
    return snapshot, "--facts"


def levels_held(snapshot: HostFacts) -> int:
    """The device level whose results the snapshot holds (not merely the one it claims)."""
    device = snapshot.device
    if device is None or device.smoke is None:
        return 0
    if device.selftest is None and device.smoke.ok:  # a failed smoke test stops the suite
        return min(device.level, 1)
    return device.level


def _with_device(
    facts: HostFacts, target: Path, request: FactsRequest, started: float
) -> HostFacts:
    """Run the device levels in the target interpreter, with progress shown as the request asks;
    the duration then covers them too."""
    from contextlib import nullcontext

    from neuron_env.device_gate import held_cores
    from neuron_env.doctor.device_levels import probe_device

    held = held_cores(request.sysroot)
    if held is not None:  # the smoke test is not started beside another job's cores
        return dataclasses.replace(facts, device=_not_started(request.level, held))
    shown = request.device_progress() if request.device_progress else nullcontext(None)
    with shown as report:
        device = probe_device(target, request.level, progress=report)
    took = round(time.monotonic() - started, 3)
    return dataclasses.replace(facts, device=device, duration_s=took)


def _not_started(level: int, held: Verdict) -> DeviceFacts:
    """The device levels as the doctor reports them when cores are held: in the same words."""
    from neuron_env.facts import DeviceFacts, DeviceRun

    smoke = DeviceRun(ok=False, summary=f"Not started: {held.summary}", hint=held.fix)
    return DeviceFacts("neuron", level, smoke=smoke)
