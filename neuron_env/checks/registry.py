"""The checks neuron-env runs, their stable ids, and running a selection of them.

``needs_hardware`` marks the checks that judge the Trainium host itself: the instance, the driver
and its devices, the Neuron system packages installed with the driver, EFA and the device tests.
On a host with no Neuron device at all (a laptop, a CI runner) ``doctor`` names them and says the
environment is ready except for them, instead of "not ready".
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from neuron_env.checks import (
    conflicts,
    cores,
    device,
    dkms,
    driver,
    efa,
    environment,
    host_kind,
    import_path,
    known_issues,
    platform,
    python,
    requirements,
    system,
)
from neuron_env.checks.model import Check, Context, Finding, Verdict
from neuron_env.errors import BadInput
from neuron_env.facts import PROBE_FIXES, PYTHON_PROBE_FLOOR_TEXT, HostFacts, below_probe_floor
from neuron_env.invocation import command
from neuron_env.schema import suggest

CHECKS: tuple[Check, ...] = (
    Check("platform.os", "platform", "Operating system",
          "OS release supported by the release, pip wheels available, glibc new enough",
          ("os",), platform.check_os),
    Check("platform.arch", "platform", "CPU architecture",
          "Linux x86_64, the only architecture TorchNeuron supports", ("os",), platform.check_arch),
    Check("platform.python", "platform", "Python version",
          "Target Python within the versions the torch-neuronx pairing supports",
          ("python",), platform.check_python),
    Check("platform.instance", "platform", "Instance type",
          "A Trn2/Trn3 EC2 instance (IMDSv2, or the driver's sysfs); not Trn1, Inf or non-EC2",
          ("ec2",), platform.check_instance, needs_hardware=True),
    Check("platform.container", "platform", "Container devices",
          "In a container or Kubernetes pod (/.dockerenv, cgroup, KUBERNETES_SERVICE_HOST), the "
          "Neuron devices were passed in", ("os", "driver"), host_kind.check_container,
          needs_hardware=True),
    Check("platform.efa", "platform", "EFA",
          "On an instance type with EFA: every EFA device (/sys/class/infiniband/* bound to efa) "
          "there, aws-neuronx-collectives installed", ("system",), efa.check_efa,
          needs_hardware=True),
    Check("driver.module", "driver", "Neuron driver",
          "Kernel module 'neuron' loaded and at least the release's driver version",
          ("driver",), driver.check_module, needs_hardware=True),
    Check("driver.devices", "driver", "Neuron devices",
          "/dev/neuron* present, readable and writable by this user, count matching the instance",
          ("driver",), driver.check_devices, needs_hardware=True),
    Check("driver.dkms-kernel", "driver", "Driver build for the kernel",
          "Module not loaded: a neuron.ko for the running kernel (/lib/modules/<uname -r>) or "
          "only DKMS builds for other kernels (/var/lib/dkms/aws-neuronx)",
          ("driver",), dkms.check_dkms_kernel, needs_hardware=True),
    Check("driver.cores-held", "driver", "NeuronCores in use",
          "No other process holds /dev/neuron* (/proc/<pid>/fd links, neuron-ls's processes), "
          "or NEURON_RT_VISIBLE_CORES avoids them", ("driver",), cores.check_cores_held,
          needs_hardware=True),
    Check("system.packages", "system", "System packages",
          "The release's aws-neuronx-* apt packages and the kernel headers DKMS needs",
          ("system",), system.check_packages, needs_hardware=True),
    Check("python.torch", "python", "PyTorch",
          "torch installed at exactly the version its torch-neuronx family pairs with",
          ("python",), python.check_torch),
    Check("python.torch-neuronx", "python", "torch-neuronx",
          "The native TorchNeuron build for the release, not the legacy XLA line or a placeholder",
          ("python",), python.check_torch_neuronx),
    Check("python.compiler", "python", "Compiler and NKI",
          "neuronx-cc and nki installed at the release's versions",
          ("python",), python.check_compiler),
    Check("python.placeholders", "python", "Placeholders",
          "No 'WRONG PACKAGE' placeholders from the default index under Neuron names",
          ("python",), python.check_placeholders),
    Check("python.known-issues", "python", "Known issues",
          "No installed package on a line the release records known issues for (public bugs "
          "that a later release fixes)", ("python",), known_issues.check_known_issues),
    Check("python.conflicts", "python", "Conflicting packages",
          "No legacy PyTorch/XLA stack, no torchao beside torchao-neuron, no competing backends",
          ("python",), conflicts.check_conflicts),
    Check("python.requirements", "python", "Requirements",
          "Every installed distribution's Requires-Dist met (as pip check), companions at the "
          "release's versions", ("python",), requirements.check_requirements),
    Check("python.path", "python", "Import path",
          "Nothing on PYTHONPATH or in the user's site-packages hides the environment's packages "
          "from a plain python (environment modules, pip install --user)",
          ("python",), import_path.check_import_path),
    Check("env.variables", "env", "Environment variables",
          "Neuron variables valid (LNC 1 or 2, core lists) and no legacy XLA variables",
          ("env",), environment.check_variables),
    Check("env.cores", "env", "NeuronCore variables",
          "NEURON_RT_VISIBLE_CORES / NEURON_RT_NUM_CORES within the instance's logical cores at "
          "its NEURON_LOGICAL_NC_CONFIG", ("env",), cores.check_core_variables),
    Check("env.cache", "env", "Compile cache",
          "Compile cache and debug directories writable with free space",
          ("env",), environment.check_cache),
    Check("device.smoke", "device", "Smoke test",
          "Level 1: the device is there, a matmul matches the CPU (fp32, bf16), no CPU fallback",
          ("device",), device.check_smoke, level=1, needs_hardware=True),
    Check("device.selftest", "device", "Self-test suite",
          "Level 2: the standard suite (ops, compile, training step, all-reduce) matches the CPU",
          ("device",), device.check_selftest, level=2, needs_hardware=True),
)  # fmt: skip


def select_checks(
    only: Sequence[str] = (),
    skipped: Sequence[str] = (),
    catalog: Sequence[Check] = CHECKS,
    allow: Sequence[str] = (),
    level: int = 0,
) -> list[Check]:
    """The checks to run at ``level``; unknown ids (to run, skip or allow) are bad input."""
    known = [c.id for c in catalog]
    for check_id in [*only, *skipped, *allow]:
        if check_id not in known:
            raise BadInput(f"Unknown check id '{check_id}'; {suggest(check_id, known)}",
                           hint=_list_them())  # fmt: skip
    too_deep = [c for c in catalog if c.id in only and c.level > level]
    if too_deep:
        raise BadInput(f"{too_deep[0].id} runs at --level {too_deep[0].level} and above.",
                       hint=f"Add --level {too_deep[0].level}.")  # fmt: skip
    chosen = [c for c in catalog if (not only or c.id in only) and c.id not in skipped]
    chosen = [c for c in chosen if c.level <= level]
    if not chosen:  # judging nothing must not read as "Ready"
        raise BadInput("--check and --skip leave no check to run.",
                       hint=_list_them())  # fmt: skip
    return chosen


def _list_them() -> str:
    return f"List them with '{command('doctor', '--list-checks')}'."


def run_checks(facts: HostFacts, ctx: Context, checks: Iterable[Check]) -> list[Finding]:
    return [run_check(check, facts, ctx) for check in checks]


def run_check(check: Check, facts: HostFacts, ctx: Context) -> Finding:
    """Run one check; facts its probe could not collect make it an ``error``, not a crash."""
    missing = [section for section in check.needs if getattr(facts, section) is None]
    if missing:
        verdict = _unprobed(facts, missing[0], ctx)
    elif check.category == "python" and facts.python is not None and not facts.python.readable:
        verdict = _packages_unread(facts.python.version)
    else:
        verdict = check.run(facts, ctx)
    if ctx.legacy_family and INSTALLS_TORCHNEURON in verdict.fix:
        # TorchNeuron does not run on Trn1/Inf2: a fix installing it would not help this host
        verdict = dataclasses.replace(verdict, fix="")
    return Finding(check.id, check.category, check.title, verdict.status, verdict.summary,
                   verdict.detail, verdict.fix)  # fmt: skip


INSTALLS_TORCHNEURON = " install --torch "
"""How every fix that installs TorchNeuron reads (:meth:`Context.install_command`)."""


def _packages_unread(version: str) -> Verdict:
    """A ``python.*`` check of an interpreter older than the probe runs on: platform.python
    fails it (and says how to get a supported one); its packages are not judged. A snapshot that
    says so of a newer Python (the probe never does) judged nothing: an error, never a skip."""
    if not below_probe_floor(version):  # a newer Python, or no version at all
        return Verdict(
            "error",
            f"Could not probe python: the snapshot records no packages of "
            f"Python {version} ('readable': false)",
            fix="Collect the facts again.",
        )
    floor = PYTHON_PROBE_FLOOR_TEXT
    return Verdict("skip", f"Not judged: neuron-env cannot read the packages of Python {version} "
                   "(see platform.python)", detail=f"It reads those of Python {floor} and later "
                   "(TorchNeuron needs 3.12 or later).")  # fmt: skip


def _unprobed(facts: HostFacts, section: str, ctx: Context) -> Verdict:
    error = facts.error_for(section)
    why = error.message if error else "not collected"
    known = error.fix if error and error.fix in PROBE_FIXES else ""  # a snapshot's own: not advice
    fix = known or f"Run again with --debug; if it persists, report it with '{ctx.program} facts'."
    return Verdict("error", f"Could not probe {section}: {why}", fix=fix)
