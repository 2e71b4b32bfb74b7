"""Why a worker run could not go on, said the same way for every worker."""

from __future__ import annotations

from pathlib import Path

from neuron_env.worker.exits import signal_name, why_it_ended
from neuron_env.worker.results import Problem


def did_not_start(worker: str, timeout: float) -> Problem:
    """A worker that sent no ``hello`` within ``timeout`` seconds (it has been killed)."""
    return Problem(
        "worker-timeout",
        f"The {worker} did not start within {timeout:g} s "
        "(importing torch or initialising the device hung); it was killed.",
        "Run 'python -c \"import torch\"' in the target environment to see where it "
        "stops, or raise --timeout.",
    )


def startup_failure(
    code: int | None, tail: str, python: Path, worker: str = "self-test worker"
) -> Problem:
    """A worker that exited before its ``hello``: its exit code and last lines of stderr (or the
    signal that killed it)."""
    last = [line for line in tail.strip().splitlines() if line.strip()][-3:]
    said = (": " + " / ".join(s.strip() for s in last)) if last else ""
    if signal_name(code) is not None:
        said = why_it_ended(code, tail)
    return Problem(
        "worker-failed",
        f"The {worker} exited with code {code} in {python} before reporting{said}",
        "Check that this interpreter runs: '" + str(python) + ' -c "import torch"\'.',
    )


def too_old_python(version: str, python: Path, worker: str = "self-test worker") -> Problem:
    """A worker that could not start because its interpreter is older than it runs on."""
    from neuron_env.facts import PYTHON_PROBE_FLOOR_TEXT as floor

    return Problem(
        "worker-failed",
        f"{python} is Python {version}: the {worker} runs on Python {floor} or later "
        "(TorchNeuron needs 3.12 or later).",
        "Point --python at the interpreter of a TorchNeuron environment (its bin/python).",
    )


def protocol_problem(worker: str, how: str, python: Path) -> Problem:
    """A worker that broke the protocol (forged, corrupted or flooded events): nothing it said
    after that is trusted."""
    return Problem(
        "worker-protocol",
        f"The {worker} in {python} {how}; it was stopped, and the run cannot pass.",
        "Something in the target environment writes to the worker's event stream, or --python "
        f"is not a Python interpreter: check that '{python} -c \"import torch\"' runs cleanly.",
    )
