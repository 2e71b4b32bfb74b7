"""``neuron-env facts --format text``: the host as a Markdown report to paste into an issue.

What ``python -m torch.utils.collect_env`` gives a PyTorch bug report, for a Trainium host: the
host, the driver and devices, the Python environment and its Neuron and torch packages, the
variables that steer Neuron, and which release neuron-env judged it against. Values are data:
table cells lose their pipes and line breaks, and nothing reaches the terminal unescaped.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from neuron_env import __version__
from neuron_env.escape import UNSAFE
from neuron_env.facts import PROBE_FIXES, HostFacts, NeuronDevice, PythonFacts
from neuron_env.frozen import frozen

# Distributions a Neuron bug report needs: the stack itself and what commonly breaks it.
REPORTED_PREFIXES = ("torch", "neuron", "libneuron", "nki", "aws-neuron", "nvidia-", "jax")
REPORTED_NAMES = ("numpy", "triton", "transformers", "accelerate", "optimum", "pip", "uv")


@frozen
class JudgedRelease:
    """The release and PyTorch neuron-env would judge the host against, and why."""

    release: str | None
    reason: str
    torch: str | None = None


def render_markdown(facts: HostFacts, judged: JudgedRelease, *, redacted: bool) -> str:
    """The whole report; ``redacted`` says so at its top, so a reader knows what is missing."""
    parts = [
        "## neuron-env facts",
        "",
        _cell_text(
            f"neuron-env {__version__} · collected {facts.collected_at} · "
            + ("redacted (--redact)" if redacted else "not redacted")
        ),
        "",
        *_release(judged),
        *_host(facts),
        *_driver(facts),
        *_python(facts.python),
        *_environment(facts),
        *_probe_errors(facts),
    ]
    return "\n".join(parts).rstrip("\n") + "\n"


def _release(judged: JudgedRelease) -> list[str]:
    rows = [("Neuron release", judged.release or "none"), ("Why", judged.reason)]
    rows += [("PyTorch", judged.torch)] if judged.torch else []
    return _section("Release judged", rows)


def _host(facts: HostFacts) -> list[str]:
    os, ec2 = facts.os, facts.ec2
    rows = [("Host name", facts.hostname or "unknown")]
    if os is not None:
        rows += [
            ("OS", f"{os.pretty_name or '?'} ({os.key or 'unknown'})"),
            ("Kernel", os.kernel or "unknown"),
            ("Architecture", os.arch or "unknown"),
            ("glibc", os.glibc or "unknown"),
            ("Container", _yes_no(os.container)),
        ]
    if ec2 is not None and ec2.on_ec2:
        rows += [
            ("Instance type", ec2.instance_type or "unknown"),
            ("Instance id", ec2.instance_id or "unknown"),
            ("Region", f"{ec2.region or '?'} ({ec2.availability_zone or '?'})"),
            ("AMI", ec2.ami_id or "unknown"),
        ]
    elif ec2 is not None:
        rows.append(("EC2", f"not on EC2: {ec2.reason}"))
    return _section("Host", rows)


def _driver(facts: HostFacts) -> list[str]:
    driver, system = facts.driver, facts.system
    rows: list[tuple[str, str]] = []
    if driver is not None:
        loaded = f"loaded, {driver.module_version or 'version unknown'}"
        open_nodes = sum(d.readable and d.writable for d in driver.devices)
        rows += [
            ("Kernel module", loaded if driver.module_loaded else "not loaded"),
            ("Device nodes", f"{len(driver.devices)} ({open_nodes} usable by this user)"),
            ("Devices (sysfs)", _devices(driver.sysfs) or "none"),
            ("neuron-ls", driver.neuron_ls_error or ("ran" if driver.neuron_ls else "not run")),
        ]
    if system is not None:
        rows += [
            ("Kernel headers", _yes_no(system.kernel_headers)),
            ("EFA devices", str(len(system.efa_devices))),
        ]
        rows += [(f"`{name}`", version) for name, version in sorted(system.packages.items())]
    return _section("Driver, devices and system packages", rows)


def _devices(sysfs: Iterable[NeuronDevice]) -> str:
    """``16 × Trainium2 (8 cores)``: alike devices counted, not listed."""
    kinds = Counter(f"{d.device_name or '?'} ({d.core_count or '?'} cores)" for d in sysfs)
    return ", ".join(f"{n} × {kind}" for kind, n in kinds.items())


def _python(python: PythonFacts | None) -> list[str]:
    if python is None:
        return _section("Python environment", [("Python", "not probed")])
    rows = [
        ("Interpreter", python.executable),
        ("Version", f"{python.version} ({python.implementation})"),
        ("Virtual environment", f"{_yes_no(python.in_venv)}: {python.prefix}"),
        ("torch backends", ", ".join(python.torch_backends) or "none"),
        ("pip index", python.pip.index_url or "the default"),
    ]
    rows += [("pip extra index", url) for url in python.pip.extra_index_urls]
    rows += [(f"`{name}`", _dist(python, name)) for name in _reported(python)]
    return _section("Python environment", rows)


def _reported(python: PythonFacts) -> list[str]:
    names = sorted(python.distributions)
    return [n for n in names if n.startswith(REPORTED_PREFIXES) or n in REPORTED_NAMES]


def _dist(python: PythonFacts, name: str) -> str:
    dist = python.distributions[name]
    how = ", ".join(x for x in (dist.installer, dist.source) if x)
    return f"{dist.version} ({how})" if how else dist.version


def _environment(facts: HostFacts) -> list[str]:
    env = facts.env
    if env is None:
        return _section("Environment variables", [("variables", "not probed")])
    lines = ["### Environment variables", ""]
    if env.variables:
        lines += ["```", *(_line(f"{k}={v}") for k, v in env.variables.items()), "```"]
    else:
        lines.append("None of the variables that steer Neuron is set.")
    lines.append("")
    rows = [
        (f"`{c.variable}`", f"{c.path} ({_cache_state(c.exists, c.writable)})")
        for c in env.cache_dirs
    ]
    return lines + (_table(rows) if rows else [])


def _cache_state(exists: bool, writable: bool) -> str:
    if not writable:
        return "not writable"
    return "exists, writable" if exists else "to be created, writable"


def _probe_errors(facts: HostFacts) -> list[str]:
    rows = [
        (e.probe, f"{e.kind}: {e.message}" + (f" Fix: {e.fix}" if e.fix in PROBE_FIXES else ""))
        for e in facts.probe_errors
    ]
    return _section("Probe errors", rows) if rows else []


def _section(title: str, rows: list[tuple[str, str]]) -> list[str]:
    return [f"### {title}", "", *_table(rows)]


def _table(rows: list[tuple[str, str]]) -> list[str]:
    return ["| | |", "|---|---|", *(f"| {_cell(k)} | {_cell(v)} |" for k, v in rows), ""]


def _cell(text: str) -> str:
    return _cell_text(text).replace("|", "\\|")


def _cell_text(text: str) -> str:
    return _line(" ".join(text.split()))


def _line(text: str) -> str:
    """One line of data: control and invisible characters shown as ``?``, never sent."""
    return UNSAFE.sub("?", text)


def _yes_no(value: bool | None) -> str:
    return "unknown" if value is None else ("yes" if value else "no")
