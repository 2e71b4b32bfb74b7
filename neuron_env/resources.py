"""The one module that knows where neuron-env's data files live.

In a source checkout the data directories sit at the top of the repository (``matrices/``,
``templates/``, ...). In an installed wheel the same directories ship under
``neuron_env/_data/``. Everything else asks this module and never builds such paths itself.
"""

from __future__ import annotations

import os
from pathlib import Path

MATRIX_DIR_ENV = "NEURON_ENV_MATRIX_DIR"

# Where neuron-env's documentation site (mkdocs.yml, docs/) is meant to be published. Every help
# link neuron-env prints or writes is a page of it, built from this one setting, and a test checks
# each is a page of the built site. Nothing is published there yet, so the README, the site and
# pyproject.toml do not link to it (the README says how to build and serve the site locally).
DOCS_URL = "https://neuron-env.readthedocs.io/en/latest/"

_PACKAGE_DIR = Path(__file__).resolve().parent
_INSTALLED_DATA = _PACKAGE_DIR / "_data"
_SOURCE_ROOT = _PACKAGE_DIR.parent


def docs_page(page: str = "") -> str:
    """The address of a page of the documentation site: ``docs_page("commands/scan/")``."""
    return DOCS_URL + page


def data_dir(name: str) -> Path:
    """Return the directory holding the shipped data called ``name`` (e.g. ``"matrices"``)."""
    installed = _INSTALLED_DATA / name
    if installed.is_dir():
        return installed
    return _SOURCE_ROOT / name


def shipped_text(name: str, filename: str) -> str:
    """A shipped data file's text (``shipped_text("scripts", "bootstrap.sh")``), read bounded
    like any other file: an installation can be damaged or tampered with too."""
    from neuron_env.input_files import MiB, read_text

    return read_text(data_dir(name) / filename, 1 * MiB)


def shipped_matrix_dir() -> Path:
    """The matrix files that ship with this version of neuron-env."""
    return data_dir("matrices")


def user_matrix_dirs(explicit: list[Path] | None = None) -> list[Path]:
    """Extra matrix directories: ``--matrix-dir`` options first, then ``$NEURON_ENV_MATRIX_DIR``.

    The environment variable may hold several directories separated by ``os.pathsep``.
    """
    dirs = list(explicit or [])
    env_value = os.environ.get(MATRIX_DIR_ENV, "")
    dirs.extend(Path(part) for part in env_value.split(os.pathsep) if part)
    return dirs


def scan_rules_file() -> Path:
    """neuron-env's own rules for ``neuron-env scan`` (XLA migration, CUDA portability, ...)."""
    return data_dir("rules") / "scan.toml"
