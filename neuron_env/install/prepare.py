"""From command-line choices to an install plan: resolve, find the target, pick the backend.

The Python version comes from the target environment (or the interpreter that will create it)
and the OS from the host's ``/etc/os-release`` (``--os`` overrides it, e.g. to prepare an
environment for another machine), so the matrix decides with the same facts the doctor sees.
"""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

from packaging.version import InvalidVersion, Version

from neuron_env.errors import BadInput, UnsupportedCombination
from neuron_env.frozen import frozen
from neuron_env.install.backends import Backend, choose_backend
from neuron_env.install.lock import check_locked, wheelhouse_files
from neuron_env.install.plan import BackendName, Choices, InstallPlan, make_plan
from neuron_env.install.request import InstallRequest, Selection
from neuron_env.install.staging import stale_staging_dirs
from neuron_env.install.target_env import (
    TargetEnv,
    check_writable_parent,
    find_base_python,
    locate_target,
    python_version,
)
from neuron_env.install.unlisted_os import unlisted_host_os, unlisted_os_refusal
from neuron_env.install.user_packages import UserRequirement, check_wheelhouse_has
from neuron_env.install.user_policy import apply_to_plan, classify, with_pins
from neuron_env.install.wheelhouse import (
    MANIFEST,
    ForeignTags,
    check_wheelhouse,
    fill_new,
    manylinux_platforms,
    read_wheelhouse,
)
from neuron_env.invocation import command, program
from neuron_env.matrix import Matrix, Note, Release, Request, resolve_target
from neuron_env.matrix.resolve import require_pip_wheels
from neuron_env.probe.os_release import probe_os


@frozen
class Prepared:
    plan: InstallPlan
    target: TargetEnv
    backend: Backend


def prepare(
    matrix: Matrix,
    request: InstallRequest,
    packages: tuple[UserRequirement, ...] = (),
) -> Prepared:
    """Resolve ``request`` into a plan, its target environment and its backend.

    ``packages`` are the user's own (``PACKAGE ...`` and ``-r FILE``), read and checked before.
    """
    torch = request.pinned_torch()
    release = matrix.get(request.release)
    _check_sources(request, torch, str(release.version))
    allowed = allowed_pythons(release, torch)
    # An unsupported PyTorch is the answer the user needs first, before a missing interpreter.
    resolve_target(matrix, Request(torch=torch, release=str(release.version)))
    if request.os:  # planned for another host, which nothing here verifies: the image's rule
        require_pip_wheels(release, request.os, building="an environment", program=program())
    os_facts = probe_os(request.sysroot)
    unlisted = unlisted_host_os(release, request, os_facts)
    allowed = _chosen_python(allowed, request.python_version)
    _judge_names_first(matrix, release, torch, packages, allowed)
    chosen = ("--torch", torch, "--release", str(release.version))
    target_env = locate_target(request.venv, request.python, allowed, chosen)
    _refuse_own_environment(target_env, request, allowed)
    check_writable_parent(target_env)
    matrix_request = Request(
        torch=torch,
        python=target_env.python_minor,
        os=None if unlisted else request.os or os_facts.key,
        arch=os_facts.arch,
        release=str(release.version),
    )
    try:
        target = resolve_target(matrix, matrix_request, program=program())
    except UnsupportedCombination as exc:
        if target_env.python_minor in allowed:
            raise
        hint = create_first_hint(target_env, allowed, request)
        raise UnsupportedCombination(exc.message, hint=hint) from None
    if unlisted and not request.allow_unlisted_os:  # after the Python's answer, as before
        raise unlisted_os_refusal(release, request, os_facts)
    if unlisted:
        target = replace(target, notes=(*target.notes, Note("warning", "os.unlisted", unlisted)))
    installed = target_env.installed()
    classified = classify(
        matrix, release, target, packages, python=target.python, installed=installed
    )
    backend = choose_backend(request.backend)
    choices = Choices(
        venv=str(target_env.path),
        action="upgrade" if target_env.exists else "create",
        base_python=str(target_env.base_python),
        backend=_backend_name(backend),
        installed=installed,
        mirrors=request.mirrors,
        wheelhouse=str(request.wheelhouse.resolve()) if request.wheelhouse else None,
        offline=request.offline or request.wheelhouse is not None,
        default_index_origin=f"{backend.name}'s configuration",
    )
    pinned = with_pins(target, classified)
    plan = make_plan(release, pinned, choices)
    plan = _with_leftover_notes(apply_to_plan(plan, classified), target_env)
    locks = {p.origin.rpartition(":")[0] for p in packages if p.hashes}
    if len(locks) == 1:  # named in the hint that exports it again
        plan = replace(plan, lock=str(Path(locks.pop()).absolute()))
    if request.wheelhouse is not None:
        routed = make_plan(release, pinned, replace(choices, wheelhouse=None))
        _check_wheelhouse(request.wheelhouse, plan, routed)
    return Prepared(plan, target_env, backend)


def _check_wheelhouse(directory: Path, plan: InstallPlan, routed: InstallPlan) -> None:
    """The wheelhouse against the routes the matrix gives when online (``routed``), the user's
    packages and the lock, before anything is created."""
    house = read_wheelhouse(directory, plan)
    if house is not None:
        check_wheelhouse(directory, house, plan, routed)
        check_wheelhouse_has(directory, (w.name for w in house.files), plan)
        check_locked(plan, wheelhouse_files(house.files), source=f"wheelhouse {directory}")
    elif any(p.hashes for p in plan.packages):
        raise BadInput(
            f"Wheelhouse {directory} has no {MANIFEST}, so its files cannot be checked against "
            "the hashes of the requirements file; nothing was created.",
            hint=f"Download writes the manifest. {fill_new(plan)}",
        )


def _with_leftover_notes(plan: InstallPlan, target: TargetEnv) -> InstallPlan:
    """Say in the plan (so --dry-run shows it) what a killed install left beside the target."""
    leftovers = stale_staging_dirs(target.path)
    if not leftovers:
        return plan
    note = Note(
        "warning",
        "install.leftover",
        f"An install that was killed left {', '.join(str(p) for p in leftovers)}; the install "
        "removes it first.",
    )
    return replace(plan, notes=(*plan.notes, note))


def _refuse_own_environment(
    target: TargetEnv, request: InstallRequest, allowed: tuple[str, ...]
) -> None:
    """neuron-env never installs into the environment it runs from (the swap would replace it)."""
    if target.path.resolve() != Path(sys.prefix).resolve():
        return
    raise BadInput(
        f"{target.path} is the environment neuron-env itself runs in; neuron-env does not "
        "install into its own environment (it would replace the running tool and its "
        "dependencies).",
        hint="Create a separate one first: "
        + new_env_commands(request, target.path.parent, allowed[0]),
    )


def create_first_hint(target: TargetEnv, allowed: tuple[str, ...], request: InstallRequest) -> str:
    """What to run instead when the environment's Python is not one the release supports."""
    if target.exists:
        return (
            f"An upgrade keeps the Python of {target.path}, so create a Python {allowed[0]} "
            f"environment instead: {new_env_commands(request, target.path.parent, allowed[0])}"
        )
    again = [*_release_args(request), "--venv", str(target.path), "--python-version", allowed[0]]
    return f"Create it with a supported Python: {command('install', *again)}"


def new_env_commands(request: InstallRequest, parent: Path, python: str) -> str:
    """``neuron-env install ... --venv DIR --python-version 3.12``: install creates DIR with a
    Python it finds (on PATH, in pyenv, among uv's), so no interpreter the host lacks is named."""
    new = _shown(parent / ".venv-neuron")
    return command("install", *_release_args(request), "--venv", new, "--python-version", python)


def _release_args(request: InstallRequest) -> list[str]:
    args = ["--torch", request.pinned_torch()]
    return [*args, "--release", request.release] if request.release else args


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it lies below it (as users type it)."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _judge_names_first(
    matrix: Matrix,
    release: Release,
    torch: str,
    packages: tuple[UserRequirement, ...],
    allowed: tuple[str, ...],
) -> None:
    """Refuse a package the release does not ship (legacy XLA, an unknown Neuron name, upstream
    torchao) before looking for an interpreter or the environment: that answer does not depend on
    them, and it is the one the user needs first. Judged again, fully, once the target is known."""
    if not packages or not allowed:
        return
    # Which names the release ships depends on neither the OS nor the architecture.
    provisional = Request(torch=torch, python=allowed[0], release=str(release.version))
    try:
        target = resolve_target(matrix, provisional)
    except BadInput:  # the pairing itself: said later, with the environment's own facts
        return
    classify(matrix, release, target, packages, python=target.python)


def _chosen_python(allowed: tuple[str, ...], wanted: str | None) -> tuple[str, ...]:
    """``--python-version``: one of the pairing's Pythons, to create the environment with."""
    if wanted is None:
        return allowed
    if wanted not in allowed:
        raise BadInput(
            f"--python-version {wanted}: this pairing supports Python {', '.join(allowed)}.",
            hint=f"Give one of them, e.g. --python-version {allowed[0]}.",
        )
    return (wanted,)


def allowed_pythons(release: Release, torch: str) -> tuple[str, ...]:
    """The Python versions of the pairing for ``torch`` (all of the release's when unknown)."""
    try:
        version = Version(torch)
        pairing = release.pairing_for(f"{version.major}.{version.minor}")
    except InvalidVersion:
        pairing = None
    if pairing is not None:
        return pairing.python
    return tuple(sorted({p for pair in release.pairings for p in pair.python}))


def _check_sources(request: InstallRequest, torch: str, release: str) -> None:
    if request.offline and request.wheelhouse is None:
        python = ("--python-version", request.python_version) if request.python_version else ()
        where = ("--os", request.os) if request.os else ()
        fill = command("download", "--torch", torch, "--release", release, *python, *where,
                       "-d", "DIR")  # fmt: skip
        raise BadInput(
            "--offline installs from a wheelhouse alone: give --wheelhouse DIR.",
            hint=f"Fill one on a connected machine with '{fill}', with a new folder in place "
            "of DIR.",
        )
    if request.wheelhouse is not None and any(request.mirrors.given().values()):
        raise BadInput(
            "--wheelhouse installs from the wheelhouse alone; do not combine it with "
            "--index-url, --neuron-index or --pytorch-index."
        )


def _backend_name(backend: Backend) -> BackendName:
    return "uv" if backend.name == "uv" else "pip"


def prepare_download(
    matrix: Matrix,
    request: Selection,
    packages: tuple[UserRequirement, ...] = (),
    *,
    dest: Path,
    python_version: str | None = None,
) -> tuple[InstallPlan, ForeignTags]:
    """The plan of wheels to download into ``dest`` (or to export) for another machine with
    ``python_version`` (None: the Python ``install`` would use here), and its platform tags."""
    torch = request.pinned_torch()
    release = matrix.get(request.release)
    python = python_version or host_python_minor(release, torch)
    os_facts = probe_os(request.sysroot)
    arch = release.release.arch[0]
    target = resolve_target(
        matrix,
        Request(
            torch=torch,
            python=python,
            os=request.os or os_facts.key,
            arch=arch,
            release=str(release.version),
        ),
        program=program(),
    )
    if request.os:
        require_pip_wheels(
            release, request.os, building="a wheelhouse or a lock", program=program()
        )
    choices = Choices(
        venv=str(dest),
        action="create",
        base_python="",
        backend="pip",
        installed={},
        mirrors=request.mirrors,
        default_index_origin="pip's configuration",
    )
    classified = classify(matrix, release, target, packages, python=target.python)
    plan = apply_to_plan(make_plan(release, with_pins(target, classified), choices), classified)
    return plan, ForeignTags(plan.python, manylinux_platforms(arch, release.release.min_glibc))


def host_python_minor(release: Release, torch: str) -> str:
    """The minor version of the interpreter ``install`` would create an environment with."""
    allowed = allowed_pythons(release, torch)
    try:
        base = find_base_python(allowed)
    except BadInput:  # a download or an export needs no interpreter: the pairing's first Python
        return allowed[0]
    return ".".join(python_version(base).split(".")[:2])
