"""A Python interpreter's version, asked in a way any Python answers (2.7 included).

Used where running neuron-env's own code in an interpreter failed (the target probe, a device
worker, the ranks' check): an interpreter older than that code runs on is then told it is too
old (:func:`neuron_env.facts.below_probe_floor`), instead of the failure it printed
(``Unknown option: -I``, a ``SyntaxError``).
"""

from __future__ import annotations

from pathlib import Path

from neuron_env.command import run
from neuron_env.errors import OperationFailed

# -E -S: no PYTHON* variables and no site module (a broken one may be why the first run failed);
# both options, unlike -I, exist in Python 2.
_VERSION_ONLY = "import sys; sys.stdout.write('%d.%d.%d' % tuple(sys.version_info[:3]))"


def version_of(python: Path, timeout: float = 5.0) -> str | None:
    """``python``'s version (``3.6.15``), or None where it gives none (it is no Python)."""
    try:
        done = run([python, "-E", "-S", "-c", _VERSION_ONLY], timeout=timeout, env=None)
    except OperationFailed:
        return None
    version = done.stdout.strip()
    parts = version.split(".")
    return version if len(parts) == 3 and all(part.isdigit() for part in parts) else None
