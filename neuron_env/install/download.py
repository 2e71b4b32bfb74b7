"""``neuron-env download`` and ``install --export``: wheelhouses and hash-pinned requirements.

Both download with pip (uv cannot download without installing), routed exactly like the pip
backend, for the target machine's Python version and platform. A failed or interrupted download
leaves no half-filled wheelhouse behind: pip's process group is killed (:mod:`neuron_env.command`),
the scratch folders are removed, and ``-d`` is removed (when the download created it) or emptied.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
import tempfile
from pathlib import Path

from neuron_env.errors import BadInput, CommandFailed, Interrupted, MalformedFile
from neuron_env.escape import UNSAFE, visible
from neuron_env.install.backends.base import Session
from neuron_env.install.plan import InstallPlan
from neuron_env.install.reachability import backend_failure
from neuron_env.install.staging import remove_tree
from neuron_env.install.wheelhouse import (
    ONLY_BINARY,
    ForeignTags,
    Wheelhouse,
    fill_new,
    fill_wheelhouse,
    hashed_requirements,
    read_wheelhouse,
)
from neuron_env.signals import held_interrupts


def download(plan: InstallPlan, dest: Path, tags: ForeignTags, *, log: Path) -> Wheelhouse:
    """Fill the new or empty directory ``dest`` with every wheel of ``plan``."""
    if dest.exists() and (not dest.is_dir() or any(dest.iterdir())):
        raise BadInput(
            f"{dest} is not an empty directory; neuron-env fills only a new or empty one.",
            hint="Choose another -d DIR.",
        )
    created = _first_missing(dest.absolute())  # what to remove again: -d and new parents
    dest.mkdir(parents=True, exist_ok=True)
    try:
        return _fill(plan, dest, tags, log)
    except BaseException as exc:
        with held_interrupts():  # a second signal must not cut the cleanup short
            _discard(dest, created)
        if isinstance(exc, KeyboardInterrupt):
            kept = "was removed" if created else "is empty, as it was"
            raise Interrupted(f"Interrupted. Nothing was kept: {dest} {kept}.") from None
        raise


def _first_missing(path: Path) -> Path | None:
    """The outermost folder of ``path`` that does not exist yet (None: it exists)."""
    missing = None
    while not path.exists() and path != path.parent:
        missing, path = path, path.parent
    return missing


def _discard(dest: Path, created: Path | None) -> None:
    if created is not None:
        remove_tree(created)
        return
    for child in dest.iterdir():
        remove_tree(child) if child.is_dir() and not child.is_symlink() else child.unlink()


def export_requirements(
    plan: InstallPlan,
    out: Path,
    tags: ForeignTags,
    *,
    log: Path,
    wheelhouse: Path | None = None,
) -> tuple[str, Wheelhouse]:
    """A requirements file's text that pins every package of ``plan`` by version and sha256."""
    if wheelhouse is not None:
        house = read_wheelhouse(wheelhouse, plan)
        if house is None:
            raise MalformedFile(
                f"{wheelhouse} has no neuron-env manifest, so its hashes are unknown.",
                hint=f"Export without --wheelhouse. Or: {fill_new(plan)}",
            )
    else:
        with tempfile.TemporaryDirectory(prefix="neuron-env-export-") as scratch:
            house = _fill(plan, Path(scratch), tags, log)
    return hashed_requirements(house, header=install_instructions(plan, out)), house


def install_instructions(plan: InstallPlan, out: Path) -> list[str]:
    """Comment lines telling a team how to install the exported file with plain pip."""
    argv = ["pip", "install", "--no-deps", "--require-hashes", ONLY_BINARY, "-r", str(out)]
    if plan.default_route.url:
        argv += ["--index-url", plan.default_route.url]
    for route in plan.routed:
        argv += ["--extra-index-url", str(route.url)]
    return [
        "# Install with (pip merges the indexes, but --require-hashes accepts these files only):",
        f"#   {' '.join(comment_word(word) for word in argv)}",
    ]


def comment_word(word: str) -> str:
    """One shell word that stays on its comment line: a control character (a newline in a file
    name) is written as bash's ``$'\\n'``, which a shell turns back into that character."""
    if not UNSAFE.search(word):
        return shlex.quote(word)
    escaped = word.replace("\\", "\\\\").replace("'", "\\'")
    return "$'" + UNSAFE.sub(lambda m: visible(m.group()), escaped) + "'"


def _fill(plan: InstallPlan, dest: Path, tags: ForeignTags, log: Path) -> Wheelhouse:
    with tempfile.TemporaryDirectory(prefix="neuron-env-download-") as scratch:
        # pip's own temporary folders go into the scratch folder: a killed pip cannot clean up
        session = Session(log=log, work=Path(scratch), extra_env={"TMPDIR": scratch})
        try:
            return fill_wheelhouse(plan, dest, _pip(session), session, tags)
        except CommandFailed as exc:
            raise backend_failure(exc, plan, log, "Nothing was kept.") from None


def _pip(session: Session) -> list[str | Path]:
    """neuron-env's own pip, or one in a throwaway venv (ensurepip works offline)."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    venv = session.work / "pip-env"
    session.run([sys.executable, "-m", "venv", venv])
    return [venv / "bin" / "python", "-m", "pip"]
