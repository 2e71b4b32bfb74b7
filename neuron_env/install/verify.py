"""Verification of a built environment against its plan, before it may replace anything.

:func:`problems` is pure: it compares what is installed (read from the environment by
:func:`~neuron_env.probe.python_env.probe_python`) and what ``import torch`` reported with the plan.
It catches a version outside a pin, a "WRONG PACKAGE" placeholder, the legacy XLA torch-neuronx
line, a Neuron package the plan does not pin that this install added, and an ``import torch`` that
fails or reports another version. :func:`import_torch` runs that import in the environment.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from neuron_env.command import clean_env, run
from neuron_env.errors import CommandFailed
from neuron_env.frozen import frozen
from neuron_env.install.plan import InstallPlan

IMPORT_TIMEOUT = 300.0
_IMPORT_TORCH = "import json, torch; print(json.dumps({'version': torch.__version__}))"


@frozen
class Problem:
    """One way the environment differs from the plan; ``code`` is a stable identifier."""

    code: str
    message: str


@frozen
class TorchImport:
    """What ``import torch`` did in the environment: its version, or the error's last line."""

    version: str | None
    error: str | None = None


def import_torch(python: Path) -> TorchImport:
    """Run ``import torch`` in ``python`` (isolated mode: no PYTHONPATH, no user site)."""
    try:
        result = run([python, "-I", "-c", _IMPORT_TORCH], timeout=IMPORT_TIMEOUT, env=clean_env())
    except CommandFailed as exc:
        lines = [line for line in exc.output.strip().splitlines() if line.strip()]
        return TorchImport(None, lines[-1] if lines else exc.message)
    try:
        return TorchImport(str(json.loads(result.stdout.strip().splitlines()[-1])["version"]))
    except (ValueError, KeyError, IndexError):
        return TorchImport(None, f"unexpected output: {result.stdout.strip()[-200:]!r}")


def problems(
    plan: InstallPlan,
    before: Mapping[str, str],
    after: Mapping[str, str],
    torch: TorchImport,
    *,
    routed: tuple[str, ...] = (),
) -> list[Problem]:
    """Everything wrong with the environment; empty when it matches the plan.

    ``routed``: Neuron packages the plan does not pin that the backend took from the Neuron index.
    """
    return [
        *_pin_problems(plan, after),
        *_placeholder_problems(plan, after),
        *_legacy_problems(plan, after),
        *_unrouted_problems(plan, before, after, routed),
        *_leftover_problems(plan, after, routed),
        *_torch_problems(plan, after, torch),
    ]


def _pin_problems(plan: InstallPlan, after: Mapping[str, str]) -> Iterator[Problem]:
    for package in plan.packages:
        version = after.get(package.name)
        if version is None:
            yield Problem(
                "version", f"{package.name} is not installed (the plan pins {package.requirement})."
            )
        elif not package.allows(version):
            yield Problem(
                "version",
                f"{package.name} {version} is installed; the plan pins {package.requirement}.",
            )


def _placeholder_problems(plan: InstallPlan, after: Mapping[str, str]) -> Iterator[Problem]:
    for name in plan.guards.placeholders:
        version = after.get(name)
        if version is not None and _is_placeholder(plan, name, version):
            yield Problem(
                "placeholder",
                f"{name} {version} is the 'WRONG PACKAGE' placeholder from the default index, "
                "not the Neuron package.",
            )


def _legacy_problems(plan: InstallPlan, after: Mapping[str, str]) -> Iterator[Problem]:
    version = after.get("torch-neuronx")
    legacy = SpecifierSet(plan.guards.legacy_xla)
    if version is not None and legacy.contains(version, prereleases=True):
        yield Problem(
            "legacy-xla",
            f"torch-neuronx {version} is the legacy PyTorch/XLA build ({legacy}), not TorchNeuron.",
        )


def _unrouted_problems(
    plan: InstallPlan, before: Mapping[str, str], after: Mapping[str, str], routed: tuple[str, ...]
) -> Iterator[Problem]:
    pinned = {p.name for p in plan.packages}
    names = {*plan.guards.neuron_names, *(n for n in after if plan.guards.is_neuron(n))}
    for name in sorted(names - pinned - set(routed)):
        version = after.get(name)
        added = version is not None and before.get(name) != version
        if added and not _is_placeholder(plan, name, version):
            yield Problem(
                "unrouted",
                f"{name} {version} was installed as a dependency, but neuron-env does not know "
                "which index it must come from, so it may be an impostor.",
            )


def _leftover_problems(
    plan: InstallPlan, after: Mapping[str, str], routed: tuple[str, ...]
) -> Iterator[Problem]:
    """The legacy XLA stack the plan removes is gone (bar what the Neuron index brought back)."""
    for name in plan.remove:
        if name in after and name not in routed:
            yield Problem(
                "legacy-xla", f"{name} {after[name]} (legacy PyTorch/XLA) is still installed."
            )


def _torch_problems(
    plan: InstallPlan, after: Mapping[str, str], torch: TorchImport
) -> Iterator[Problem]:
    if torch.version is None:
        yield Problem("import-torch", f"'import torch' fails in the new environment: {torch.error}")
        return
    pin = plan.package("torch")
    if not pin.allows(torch.version):
        yield Problem(
            "import-torch",
            f"'import torch' reports version {torch.version}; the plan pins {pin.requirement}.",
        )
    elif after.get("torch") not in (None, torch.version):
        yield Problem(
            "import-torch",
            f"'import torch' reports {torch.version} but the installed torch is "
            f"{after['torch']}: another torch shadows it.",
        )


def _is_placeholder(plan: InstallPlan, name: str, version: str | None) -> bool:
    candidates = plan.guards.placeholders.get(name, ())
    if version is None or not candidates:
        return False
    try:
        parsed = Version(version)
        return any(parsed == Version(c) for c in candidates)
    except InvalidVersion:
        return version in candidates
