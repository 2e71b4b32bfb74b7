"""The one entry point of every worker: ``python [-I] <neuron_env>/worker/target JOB [ARGS]``.

JOB names the worker to run: ``selftest`` (its request on stdin, or ``--rank REQUEST`` for one rank
of a distributed case), ``evaluate`` (its request on stdin) or ``collectives`` (``REQUEST_JSON`` on
every rank, started by torchrun or by the user's launcher). The entry runs ``main(ARGS)`` of
``neuron_env/JOB/worker/main.py``.

The workers share the target-side modules (this package: the protocol, the device, comparisons,
timing) through relative imports, but neuron-env itself need not be importable in the target (its
dependencies may be absent). So the worker directories are loaded under a private root package
whose parent packages are empty shells: their ``__init__`` files, which import neuron-env's
dependencies, never run. Running a directory also puts it first on ``sys.path``, where its generic
module names (``device``, ``errors``) could shadow what torch imports; it is taken off again.
"""

import importlib
import sys
import types
from pathlib import Path
from typing import Any

ROOT = "_neuron_env_in_target"
JOBS = ("selftest", "evaluate", "collectives")


def _shell(name: str, path: Path) -> None:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    sys.modules[name] = module


def _load_main(job: str) -> types.ModuleType:
    here = Path(__file__).resolve().parent
    package = here.parents[1]  # the neuron_env directory
    if sys.path and Path(sys.path[0]).resolve() == here:
        del sys.path[0]
    _shell(ROOT, package)
    _shell(f"{ROOT}.{job}", package / job)
    _shell(ROOT + ".worker", package / "worker")
    return importlib.import_module(f"{ROOT}.{job}.worker.main")


def main(argv: list[str]) -> int:
    """Run the worker that ``argv[0]`` names with the rest of ``argv``."""
    if not argv or argv[0] not in JOBS:
        sys.stderr.write(f"usage: python {Path(__file__).parent} {'|'.join(JOBS)} [ARGS]\n")
        return 2
    worker: Any = _load_main(argv[0])
    code: int = worker.main(argv[1:])
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
