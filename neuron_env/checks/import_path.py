"""``python.path``: what PYTHONPATH and the user's site-packages put ahead of the environment.

doctor reads the environment's packages with ``python -I``, which leaves both out; a user's own
``python train.py`` does not. An environment module (``module load pytorch`` sets PYTHONPATH on
HPC clusters) or a ``pip install --user torch`` on a system Python then decides what
``import torch`` gets, whatever the environment holds: a torch there at another version hides
the environment's, and a Neuron or PyTorch package there that the environment lacks is imported
all the same.
"""

from __future__ import annotations

import os
import shlex

from neuron_env.checks.model import Context, Verdict, fail, ok, skip, warn
from neuron_env.facts import HostFacts, ImportPath, PathDistribution
from neuron_env.matrix.names import decides_the_device, known_neuron_names
from neuron_env.wording import join_words


def check_import_path(facts: HostFacts, ctx: Context) -> Verdict:
    """``python.path``: nothing on PYTHONPATH or in the user's site-packages changes what the
    environment's packages import as."""
    assert facts.python is not None
    path = facts.python.import_path
    if path is None:
        return skip("Not collected (a snapshot from an older neuron-env)")
    sources = _sources(path)
    if not sources:
        return ok("No PYTHONPATH, no user site-packages: imports come from the environment")
    installed = facts.python.distributions
    known = known_neuron_names(ctx.releases)
    decisive: dict[str, PathDistribution] = {}
    other: dict[str, PathDistribution] = {}
    said: dict[str, str] = {}
    for name, dist in sorted(path.distributions.items()):
        mine = installed.get(name)
        important = decides_the_device(name, known)
        if mine is not None and mine.version != dist.version:
            said[name] = f"{name} {dist.version} (not the environment's {mine.version})"
            (decisive if important else other)[name] = dist
        elif mine is None and important:
            said[name] = f"{name} {dist.version} (not in the environment)"
            decisive[name] = dist
    if not said:
        return ok(f"{_capital(sources)} hides none of the environment's packages")
    summary = "A plain python imports " + _from_where(path, decisive or other, said)
    detail = (
        "doctor judges the environment's own packages; a script run with this PYTHONPATH or "
        "user site-packages imports these instead. An environment module may set PYTHONPATH "
        "('module list' names it)."
    )
    if decisive and other:
        detail += "\nAlso: " + _from_where(path, other, said)
    verdict = fail if decisive else warn
    return verdict(summary, fix=_fix(path, [*decisive.values(), *other.values()]), detail=detail)


def _from_where(path: ImportPath, found: dict[str, PathDistribution], said: dict[str, str]) -> str:
    """``torch 2.5.1 (...) from PYTHONPATH's /opt/sw/site-packages``, a folder at a time."""
    by_folder: dict[str, list[str]] = {}
    for name, dist in found.items():
        by_folder.setdefault(dist.folder, []).append(said[name])
    return "; ".join(
        f"{join_words(phrases)} from {path.origin(folder)} {folder}"
        for folder, phrases in by_folder.items()
    )


def _sources(path: ImportPath) -> str:
    """``PYTHONPATH``, ``the user's site-packages``, both, or nothing."""
    parts = ["PYTHONPATH"] if path.pythonpath else []
    parts += ["the user's site-packages"] if path.user_site else []
    return " and ".join(parts)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fix(path: ImportPath, found: list[PathDistribution]) -> str:
    """Commands that take the folders in the way off a plain python's path, in this shell."""
    folders = {dist.folder for dist in found}
    steps: list[str] = []
    if folders & set(path.pythonpath):
        kept = os.pathsep.join(folder for folder in path.pythonpath if folder not in folders)
        steps.append(f"export PYTHONPATH={shlex.quote(kept)}" if kept else "unset PYTHONPATH")
    if path.user_site in folders:
        steps.append("export PYTHONNOUSERSITE=1")
    return " && ".join(steps)
