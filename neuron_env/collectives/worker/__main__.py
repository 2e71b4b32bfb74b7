"""Entry point: ``python path/to/collectives/worker REQUEST_JSON`` on every rank.

Loaded under a private root package whose parents are empty shells (as the self-test worker is),
so neuron-env and its dependencies need not be importable in the target. The directory itself is
taken off ``sys.path`` so its module names cannot shadow what torch imports.
"""

import importlib
import sys
import types
from pathlib import Path

ROOT = "_neuron_env_collectives"


def _shell(name: str, path: Path) -> None:
    module = types.ModuleType(name)
    module.__path__ = [str(path)]
    sys.modules[name] = module


def _load_main() -> object:
    here = Path(__file__).resolve().parent
    if sys.path and Path(sys.path[0]).resolve() == here:
        del sys.path[0]
    _shell(ROOT, here.parent)
    return importlib.import_module(ROOT + ".worker.main")


if __name__ == "__main__":
    sys.exit(_load_main().main(sys.argv[1:]))  # type: ignore[attr-defined]
