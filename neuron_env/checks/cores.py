"""NeuronCores: the core variables against the instance's logical cores, and cores another
process holds. One torch ``neuron:N`` device is one logical core; the runtime takes every core a
process is allowed, so a second job on held cores finds none free."""

from __future__ import annotations

import re
import shlex
from typing import Any

from neuron_env.checks.device_identity import driver_identity
from neuron_env.checks.model import Context, Verdict, fail, ok, skip, warn
from neuron_env.facts import DeviceHolder, HostFacts
from neuron_env.frozen import frozen
from neuron_env.matrix import Release
from neuron_env.wording import join_words, plural, shorten_words

# Physical NeuronCores per chip (aws.md: Trainium2 8 NeuronCore-v3, Trainium3 8 NeuronCore-v4,
# both CONFIRMED). LNC=2 (the default) pairs them: 4 logical cores per chip, 64 on trn2.48xlarge.
CORES_PER_CHIP = {"trainium2": 8, "trainium3": 8}
DEFAULT_LNC = 2
VISIBLE = "NEURON_RT_VISIBLE_CORES"
NUM = "NEURON_RT_NUM_CORES"
LNC = "NEURON_LOGICAL_NC_CONFIG"
CORE_LIST = re.compile(r"[0-9]+(?:-[0-9]+)?(?:,[0-9]+(?:-[0-9]+)?)*")
MAX_CORE = 99_999  # far past any instance's cores: a larger number is a typo, never expanded


@frozen
class Cores:
    """The logical NeuronCores of this instance at its LNC setting."""

    instance_type: str
    chips: int
    physical_per_chip: int
    lnc: int

    @property
    def per_device(self) -> int:
        return self.physical_per_chip // self.lnc

    @property
    def count(self) -> int:
        return self.chips * self.per_device

    def describe(self) -> str:
        other = 1 if self.lnc == 2 else 2
        at_other = self.chips * self.physical_per_chip // other
        return (f"this {self.instance_type} has logical NeuronCores 0-{self.count - 1} at LNC="
                f"{self.lnc} ({self.count} cores; {at_other} at LNC={other})")  # fmt: skip


def instance_type(facts: HostFacts) -> str | None:
    """The instance type (a size, ``trn2.48xlarge``) from IMDS. The driver's sysfs names only the
    family (``Trn2``), so without IMDS the size is unknown."""
    return facts.ec2.instance_type if facts.ec2 and facts.ec2.instance_type else None


def logical_cores(facts: HostFacts, release: Release) -> Cores | None:
    """The instance's logical cores, when its chip, chip count and LNC are known: from the IMDS
    type, else from the family and the devices the driver's sysfs lists."""
    lnc = (facts.env.variables if facts.env else {}).get(LNC, str(DEFAULT_LNC))
    if lnc not in ("1", "2"):
        return None
    name = instance_type(facts)
    known = release.instance_types.get(name or "")
    if name is not None and known is not None:
        chips, family_name = known.chips, known.family
    elif name is None and (identity := driver_identity(facts)) and identity.family:
        name = f"{identity.instance_type} host ({identity.devices} Neuron devices)"
        chips, family_name = identity.devices, identity.family
    else:
        return None
    family = release.families.get(family_name)
    per_chip = CORES_PER_CHIP.get(family.chip or "") if family else None
    return Cores(name, chips, per_chip, int(lnc)) if per_chip else None


@frozen
class CoreList:
    """A NEURON_RT_VISIBLE_CORES value as its ranges (``0-3,8``: (0, 3), (8, 8)), never
    expanded into one number per core: ``0-999999999`` costs no more than ``0-3``."""

    ranges: tuple[tuple[int, int], ...]

    @property
    def highest(self) -> int:
        return max(high for _, high in self.ranges)

    def devices(self, per_device: int) -> set[int]:
        """The devices (chips) these cores are on, ``per_device`` logical cores to a chip."""
        return {
            d for low, high in self.ranges for d in range(low // per_device, high // per_device + 1)
        }


def parse_core_list(text: str) -> CoreList:
    """``0-3,8`` as its ranges; :class:`ValueError` saying what is wrong otherwise (a range that
    runs backwards, a number past :data:`MAX_CORE`, anything not a core list)."""
    compact = text.replace(" ", "")
    if not CORE_LIST.fullmatch(compact):
        raise ValueError("expected e.g. 0-3 or 0,2")
    ranges = []
    for part in compact.split(","):
        low, _, high = part.partition("-")
        if len(low) > 5 or len(high) > 5 or max(int(low), int(high or low)) > MAX_CORE:
            raise ValueError(f"{part} is past any instance's cores (at most {MAX_CORE})")
        if high and int(high) < int(low):
            raise ValueError(f"{part} runs backwards: write it {high}-{low}")
        ranges.append((int(low), int(high or low)))
    return CoreList(tuple(ranges))


def core_list(text: str) -> CoreList | None:
    """:func:`parse_core_list`, or None when ``text`` is not a valid core list."""
    try:
        return parse_core_list(text)
    except ValueError:
        return None


def core_count(text: str) -> int:
    """A NEURON_RT_NUM_CORES value; :class:`ValueError` saying what is wrong otherwise."""
    if not re.fullmatch(r"[0-9]{1,5}", text.strip()) or int(text) < 1:
        raise ValueError(f"expected a number of cores from 1 to {MAX_CORE}")
    return int(text)


def check_core_variables(facts: HostFacts, ctx: Context) -> Verdict:
    """``env.cores``: NEURON_RT_VISIBLE_CORES and NEURON_RT_NUM_CORES stay within this instance's
    logical NeuronCores at its NEURON_LOGICAL_NC_CONFIG (default 2)."""
    assert facts.env is not None
    env = facts.env.variables
    if VISIBLE not in env and NUM not in env:
        return ok("No core variables set: the runtime takes every free core")
    cores = logical_cores(facts, ctx.release)
    if cores is None:
        return skip("The instance's NeuronCore count is unknown; core variables not compared")
    present = _present_devices(facts)
    problem = _unusable(env)
    if problem is not None:
        return fail(f"{problem}: {cores.describe()}", fix=_fix_for(cores, problem, present))
    visible = core_list(env.get(VISIBLE, ""))
    number = env.get(NUM, "")
    if visible and visible.highest >= cores.count:
        return fail(f"{VISIBLE}={env[VISIBLE]} is past the cores: {cores.describe()}",
                    fix=_fix_for(cores, VISIBLE, present))  # fmt: skip
    missing = sorted(visible.devices(cores.per_device) - present) if visible and present else []
    if missing:
        return fail(_not_here(env[VISIBLE], missing, present or set()),
                    fix=_fix_for(cores, VISIBLE, present))  # fmt: skip
    if number and core_count(number) > cores.count:
        return fail(f"{NUM}={number} is more than the cores: {cores.describe()}",
                    fix=_fix_for(cores, NUM, present))  # fmt: skip
    shown = ", ".join(f"{k}={env[k]}" for k in (VISIBLE, NUM) if k in env)
    return ok(f"{shown}: within logical cores 0-{cores.count - 1} (LNC={cores.lnc})")


def _not_here(value: str, missing: list[int], present: set[int]) -> str:
    """``NEURON_RT_VISIBLE_CORES=8-15 names cores on /dev/neuron2 and 1 more device, which this
    container does not have (it has 2 Neuron devices)``."""
    more = f" and {plural(len(missing) - 1, 'more device')}" if len(missing) > 1 else ""
    has = plural(len(present), "Neuron device")
    return (f"{VISIBLE}={value} names cores on /dev/neuron{missing[0]}{more}, which this "
            f"container does not have (it has {has})")  # fmt: skip


def _unusable(env: dict[str, str]) -> str | None:
    """What is wrong with a core variable that is not a core list or a count at all."""
    for name, parse in ((VISIBLE, parse_core_list), (NUM, core_count)):
        if name in env:
            try:
                parse(env[name])
            except ValueError as exc:
                return f"{name}={env[name]} is not usable ({exc})"
    return None


def _fix_for(cores: Cores, problem: str, present: set[int] | None = None) -> str:
    """The export that fits: every core, or in a container that has only some devices, the cores
    of its first unbroken run of devices (core numbers are the host's there too: the container
    docs pass --device=/dev/neuron12 --device=/dev/neuron13 with NEURON_RT_VISIBLE_CORES=51,52)."""
    devices = sorted(d for d in present or () if d < cores.chips)
    if devices and len(devices) < cores.chips:
        run = [d for i, d in enumerate(devices) if d == devices[0] + i]
        low, high = run[0] * cores.per_device, (run[-1] + 1) * cores.per_device - 1
        if problem.startswith(NUM):
            return f"export {NUM}={len(devices) * cores.per_device}"
        return f"export {VISIBLE}={shlex.quote(f'{low}-{high}')}"
    if problem.startswith(NUM):
        return f"export {NUM}={cores.count}"
    return f"export {VISIBLE}={shlex.quote(f'0-{cores.count - 1}')}"


@frozen
class Holder(DeviceHolder):
    """A holder as judged: ``host_pid`` when the PID is the host's, seen from a container's own
    PID namespace (as neuron-ls prints it there), so not a process this one can signal."""

    host_pid: bool = False


def holders(facts: HostFacts) -> list[Holder] | None:
    """Processes holding a device: /proc's fd links merged with neuron-ls's process list. In a
    container's own PID namespace neuron-ls names processes by their host PIDs: those are kept
    apart, marked ``host_pid``, never merged with (or mistaken for) a PID of this container."""
    assert facts.driver is not None
    host_pids = facts.driver.host_pid_namespace is False
    found = {
        (False, h.pid): Holder(h.pid, h.command, h.devices) for h in facts.driver.holders or ()
    }
    for pid, command, device in _listed_processes(facts.driver.neuron_ls):
        seen = found.get((host_pids, pid))
        devices = tuple(sorted({*(seen.devices if seen else ()), device}, key=_node_number))
        command = seen.command if seen else command
        found[(host_pids, pid)] = Holder(pid, command, devices, host_pid=host_pids)
    if facts.driver.holders is None and not found:
        return None
    return [found[key] for key in sorted(found)]


def _listed_processes(listing: Any) -> list[tuple[int, str, str]]:
    """(pid, command, /dev/neuronN) from neuron-ls JSON (a list of devices, or a dict with one)."""
    devices = listing.get("neuron_devices", []) if isinstance(listing, dict) else listing
    found = []
    for device in devices if isinstance(devices, list) else []:
        if not isinstance(device, dict) or not isinstance(device.get("neuron_device"), int):
            continue
        for proc in device.get("neuron_processes") or []:
            if isinstance(proc, dict) and isinstance(proc.get("pid"), int):
                command = str(proc.get("command") or "?")
                found.append((proc["pid"], command, f"/dev/neuron{device['neuron_device']}"))
    return found


def _node_number(path: str) -> int:
    digits = path.removeprefix("/dev/neuron")
    return int(digits) if digits.isascii() and digits.isdigit() else -1


def held_message(found: list[Holder]) -> str:
    """``pid 4242 (python train.py) holds /dev/neuron0 … /dev/neuron15 (16 devices)``; a holder
    outside this container: ``/dev/neuron3 held by a process outside this container (host PID
    777: python serve.py)``."""
    parts = []
    for holder in found[:3]:
        nodes = holder.devices
        shown = (f"{nodes[0]} … {nodes[-1]} ({len(nodes)} devices)" if len(nodes) > 3
                 else join_words(nodes))  # fmt: skip
        command = shorten_words(holder.command, 80)
        if holder.host_pid:
            parts.append(f"{shown} held by a process outside this container "
                         f"(host PID {holder.pid}: {command})")  # fmt: skip
        else:
            parts.append(f"pid {holder.pid} ({command}) holds {shown}")
    others = len(found) - 3
    more = f"; {others} more process{'es' if others > 1 else ''}" if others > 0 else ""
    return "; ".join(parts) + more


def held_verdict(facts: HostFacts, cores: Cores | None) -> Verdict:
    """The judgement the doctor and the device commands share: warn on held devices unless
    NEURON_RT_VISIBLE_CORES keeps this process on free ones (``cores`` None: not known)."""
    found = holders(facts)
    if found is None:
        return skip("Not collected (a snapshot from an older neuron-env)")
    unreadable = facts.driver.holders_unreadable if facts.driver else 0
    whose = "1 process" if unreadable == 1 else f"{unreadable} processes"
    detail = (f"{whose} of other users could not be inspected; run as root to see them."
              if unreadable else "")  # fmt: skip
    if not found:
        return ok("No other process holds a Neuron device", detail=detail)
    held = {_node_number(d) for h in found for d in h.devices}
    message = held_message(found)
    visible = core_list((facts.env.variables if facts.env else {}).get(VISIBLE, ""))
    if cores and visible and not visible.devices(cores.per_device) & held:
        return ok(f"{message}; {VISIBLE} keeps this process on free cores", detail=detail)
    fix = _free_fix(found, held, cores, _present_devices(facts))
    return warn(f"NeuronCores in use: {message}", fix=fix, detail=detail)


def _present_devices(facts: HostFacts) -> set[int] | None:
    """The /dev/neuronN this process has (a container has only those passed in); None when the
    nodes were not listed."""
    nodes = facts.driver.devices if facts.driver else ()
    return {_node_number(n.path) for n in nodes} if nodes else None


def _free_fix(
    found: list[Holder], held: set[int], cores: Cores | None, present: set[int] | None
) -> str:
    wait = _stop_step(found)
    if cores is None:
        return wait + "."
    have = present if present is not None else set(range(cores.chips))
    free = [d for d in range(cores.chips) if d not in held and d in have]
    if not free:
        which = "every device this container has" if present is not None else "every device"
        return f"{wait}; {which} is held, so no core is free."
    run = [d for i, d in enumerate(free) if d == free[0] + i]  # the first unbroken run
    low, high = run[0] * cores.per_device, (run[-1] + 1) * cores.per_device - 1
    return f"{wait}, or run on free cores: export {VISIBLE}={low}-{high}"


def _stop_step(found: list[Holder]) -> str:
    """How to end the holders: ``kill`` for this namespace's processes; a host PID is stopped
    from the host, since a container can neither see nor signal it."""
    mine = " ".join(str(h.pid) for h in found[:3] if not h.host_pid)
    hosts = " ".join(str(h.pid) for h in found[:3] if h.host_pid)
    steps = [f"kill {mine}"] if mine else []
    if hosts:
        steps.append(f"from the host, not this container: sudo kill {hosts}")
    return f"Wait for it to finish or stop it ({'; '.join(steps)})"


def check_cores_held(facts: HostFacts, ctx: Context) -> Verdict:
    """``driver.cores-held``: no other process holds a /dev/neuron* (its /proc/<pid>/fd, as
    fuser finds them, and neuron-ls's process list), or NEURON_RT_VISIBLE_CORES avoids them."""
    assert facts.driver is not None
    return held_verdict(facts, logical_cores(facts, ctx.release))
