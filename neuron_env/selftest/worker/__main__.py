"""Entry point: ``python -I path/to/worker [--rank REQUEST]``.

Running a directory puts it first on ``sys.path``; the modules here have generic names (``ops``,
``cases``) that must not shadow anything torch imports, so the directory is taken off ``sys.path``
again and loaded as a package under a private name, which keeps its relative imports working.
"""

import importlib
import importlib.util
import sys
from pathlib import Path

PACKAGE = "_neuron_env_selftest_worker"


def _load_main() -> object:
    here = Path(__file__).resolve().parent
    if sys.path and Path(sys.path[0]).resolve() == here:
        del sys.path[0]
    spec = importlib.util.spec_from_file_location(
        PACKAGE, here / "__init__.py", submodule_search_locations=[str(here)]
    )
    assert spec is not None and spec.loader is not None
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    spec.loader.exec_module(package)
    return importlib.import_module(PACKAGE + ".main")


if __name__ == "__main__":
    sys.exit(_load_main().main(sys.argv[1:]))  # type: ignore[attr-defined]
