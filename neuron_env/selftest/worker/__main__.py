"""Entry point: ``python -I path/to/worker [--rank REQUEST]``.

The worker shares the target-side modules of every worker (``neuron_env/worker/target``: the
protocol, the device, comparisons, timing) through relative imports, but neuron-env itself need
not be importable in the target (its dependencies may be absent). So the worker directories are
loaded under a private root package whose parent packages are empty shells: their ``__init__``
files, which import neuron-env's dependencies, never run. Running a directory also puts it first
on ``sys.path``, where its generic module names (``ops``, ``cases``) could shadow what torch
imports; it is taken off again.
"""

import importlib
import sys
import types
from pathlib import Path

ROOT = "_neuron_env_in_target"


def _shell(name: str, path: Path) -> None:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    sys.modules[name] = module


def _load_main() -> object:
    here = Path(__file__).resolve().parent
    package = here.parents[1]  # the neuron_env directory
    if sys.path and Path(sys.path[0]).resolve() == here:
        del sys.path[0]
    _shell(ROOT, package)
    _shell(ROOT + ".selftest", package / "selftest")
    _shell(ROOT + ".worker", package / "worker")
    return importlib.import_module(ROOT + ".selftest.worker.main")


if __name__ == "__main__":
    sys.exit(_load_main().main(sys.argv[1:]))  # type: ignore[attr-defined]
