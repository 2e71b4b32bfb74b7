"""The running user's home folder, or None where there is none.

A container run as an arbitrary uid (``docker run --user 12345``, a Kubernetes ``runAsUser``)
has no entry in ``/etc/passwd``; with ``HOME`` unset as well (``env -i``, a service manager),
:meth:`pathlib.Path.home` raises (RuntimeError on Python 3.11 and later, KeyError before). What
neuron-env keeps under the home folder (its cache, install logs, the pip and netrc files it
reads like pip does, the places Pythons are looked for) is then simply not there: every caller
asks :func:`home` and goes on without it, as pip does.
"""

from __future__ import annotations

from pathlib import Path


def home() -> Path | None:
    """``Path.home()``, or None when this user has no home folder to name."""
    try:
        return Path.home()
    except (KeyError, RuntimeError):
        return None
