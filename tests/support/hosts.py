"""Scenario hosts for the doctor: a sysroot, a target venv and an IMDS answer per scenario.

Each ``tests/data/hosts/<scenario>/scenario.toml`` starts from a base sysroot under
``tests/data/hosts/_base/``, overlays the scenario's own ``root/`` files, removes ``remove`` paths,
and describes the target environment (``[python]`` distributions), IMDS (``imds``: an instance
type, ``"silent"``, ``"disabled"`` or ``"forbidden"``: HTTP 403), extra environment variables and
the expected verdicts (every check not listed in ``[expect]`` must be ``ok``). ``unprivileged``
scenarios make the device nodes inaccessible and run neuron-env without the root override of file
permissions.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Generator, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import tomllib

from tests.support.cli import DATA, CliRunner, Result, cli_runner
from tests.support.dists import WRONG_PACKAGE, add_distribution, make_venv, write_dist_info
from tests.support.imds import imds_server, instance_metadata, silent_endpoint

HOSTS = DATA / "hosts"
HEALTHY_PYTHON = {
    "torch": "2.14.0+cpu",
    "torch-neuronx": "2.14.3.0.2187",
    "neuronx-cc": "2.28.7631.0",
    "nki": "0.7.0",
}


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    base: str = "trn2-ubuntu-26.04"
    imds: str = "trn2.48xlarge"
    release: str | None = None
    torch: str | None = None
    matrix: str = "allows-test-python"
    python: dict[str, str] = field(default_factory=lambda: dict(HEALTHY_PYTHON))
    placeholders: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    pythonpath: dict[str, str] = field(default_factory=dict)
    """Distributions in a folder PYTHONPATH names (an environment module's site-packages)."""
    remove: tuple[str, ...] = ()
    unprivileged: bool = False
    expect: dict[str, str] = field(default_factory=dict)
    fix: dict[str, str] = field(default_factory=dict)
    says: dict[str, str] = field(default_factory=dict)
    never: tuple[str, ...] = ()
    """Words no fix may contain (``apt-get`` inside a pod or on Bottlerocket)."""
    needs_hardware: tuple[str, ...] = ()
    """The checks that did not pass only because the host has no Neuron device (exit 3 when
    nothing else failed): ``doctor``'s ``needs_hardware``."""

    @property
    def folder(self) -> Path:
        return HOSTS / self.name


def load_scenario(name: str) -> Scenario:
    with (HOSTS / name / "scenario.toml").open("rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    python = dict(HEALTHY_PYTHON)
    python.update(data.pop("python", {}))
    for dropped in data.pop("drop", []):
        python.pop(dropped)
    tuples: dict[str, Any] = {
        k: tuple(data.pop(k))
        for k in ("placeholders", "remove", "never", "needs_hardware")
        if k in data
    }
    return Scenario(name=name, python=python, **tuples, **data)


def scenario_names() -> list[str]:
    return sorted(p.parent.name for p in HOSTS.glob("*/scenario.toml"))


def build_sysroot(scenario: Scenario, where: Path) -> Path:
    root = where / "sysroot"
    shutil.copytree(HOSTS / "_base" / scenario.base, root, symlinks=True)
    overlay = scenario.folder / "root"
    if overlay.is_dir():
        shutil.copytree(overlay, root, symlinks=True, dirs_exist_ok=True)
    for pattern in scenario.remove:
        for path in sorted(root.glob(pattern), reverse=True):
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    return root


def build_target(scenario: Scenario, where: Path) -> Path:
    venv = where / "target"
    python = make_venv(venv)
    for name, version in scenario.python.items():
        summary = WRONG_PACKAGE if name in scenario.placeholders else ""
        add_distribution(venv, name, version, summary)
    for name, version in scenario.pythonpath.items():
        write_dist_info(module_site(where), name, version)
    return python


def module_site(where: Path) -> Path:
    """The folder a scenario's PYTHONPATH names (``pythonpath`` in its scenario.toml)."""
    return where / "module-site-packages"


def scenario_env(scenario: Scenario, where: Path) -> dict[str, str]:
    """The scenario's own variables, and PYTHONPATH where it has a module's packages."""
    path = {"PYTHONPATH": str(module_site(where))} if scenario.pythonpath else {}
    return {**scenario.env, **path}


@contextmanager
def imds_environment(scenario: Scenario) -> Iterator[dict[str, str]]:
    """The AWS variables that point neuron-env at this scenario's IMDS."""
    with ExitStack() as stack:
        if scenario.imds == "disabled":
            yield {"AWS_EC2_METADATA_DISABLED": "true"}
        elif scenario.imds == "silent":
            yield {"AWS_EC2_METADATA_SERVICE_ENDPOINT": stack.enter_context(silent_endpoint())}
        elif scenario.imds == "forbidden":  # instance metadata turned off: 403 to every token
            server = stack.enter_context(imds_server({}, forbidden=True))
            yield {"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint}
        else:
            server = stack.enter_context(imds_server(instance_metadata(scenario.imds)))
            yield {"AWS_EC2_METADATA_SERVICE_ENDPOINT": server.endpoint}


@dataclass(frozen=True)
class Host:
    """A scenario host built under a test's folder (the one ``Host`` the tests share): its sysroot,
    target interpreter, matrix folder, and the variables that point neuron-env at its IMDS and
    matrix (plus the scenario's own)."""

    sysroot: Path
    python: Path
    matrix: Path
    env: dict[str, str]

    def probe(self) -> list[str]:
        """The options that make a command look at this host instead of the running one."""
        return ["--sysroot", str(self.sysroot), "--python", str(self.python)]

    def args(self, command: str, *extra: str) -> list[str]:
        """``command`` judged on this host against its matrix, followed by ``extra``."""
        return ["--matrix-dir", str(self.matrix), command, *self.probe(), *extra]


def scenario_host(scenario: Scenario | str, where: Path, **env: str) -> Generator[Host, None, None]:
    """Build ``scenario`` (or the one so named) under ``where`` and yield it while its IMDS
    answers; ``env`` adds variables (e.g. ``NO_COLOR``). A generator: ``yield from`` it in a
    fixture, or ``next()`` it and ``close()`` it when done."""
    if isinstance(scenario, str):
        scenario = load_scenario(scenario)
    where.mkdir(parents=True, exist_ok=True)
    sysroot, python = build_sysroot(scenario, where), build_target(scenario, where)
    matrix = write_matrix(scenario.matrix, where)
    with imds_environment(scenario) as aws:
        matrix_env = {"NEURON_ENV_MATRIX_DIR": str(matrix)}
        own = scenario_env(scenario, where)
        yield Host(sysroot, python, matrix, {**aws, **matrix_env, **own, **env})


@contextmanager
def running_host(scenario: Scenario | str, where: Path, **env: str) -> Iterator[Host]:
    """:func:`scenario_host` for a ``with`` block: its IMDS stops when the block ends."""
    yield from scenario_host(scenario, where, **env)


def write_matrix(kind: str, where: Path) -> Path:
    """Matrix files that allow (or forbid) the Python running the tests.

    The shipped releases allow Python 3.12–3.14 while the tests run on 3.11; scenarios about
    anything but the Python version judge against copies that also allow the running minor.
    """
    from neuron_env.resources import shipped_matrix_dir

    minor = f"{sys.version_info.major}.{sys.version_info.minor}"
    folder = where / f"matrix-{kind}"
    folder.mkdir()
    for path in shipped_matrix_dir().glob("*.toml"):
        text = path.read_text()
        allowed = ['"3.12"', '"3.13"', '"3.14"']
        pythons = [p for p in allowed if p != f'"{minor}"']
        if kind == "allows-test-python":
            pythons = sorted(
                {*pythons, f'"{minor}"'}, key=lambda v: int(v.strip('"').split(".")[1])
            )
        text = text.replace('python = ["3.12", "3.13", "3.14"]', f"python = [{', '.join(pythons)}]")
        (folder / path.name).write_text(text)
    return folder


# Root may open any file; without these capabilities, file permissions apply to it too.
DROP_ROOT_OVERRIDE = [
    "setpriv",
    "--bounding-set=-dac_override,-dac_read_search",
    "--inh-caps=-dac_override,-dac_read_search",
    "--",
]


def run_doctor(scenario: Scenario, where: Path, *extra: str) -> Result:
    with scenario_doctor(scenario, where) as doctor:
        return doctor(*extra)


@contextmanager
def scenario_doctor(scenario: Scenario, where: Path) -> Iterator[CliRunner]:
    """The doctor judging ``scenario``'s host, built under ``where`` (``sysroot``, ``target``,
    ``matrix-KIND``): call it with more arguments, as often as needed, while IMDS answers."""
    sysroot, python = build_sysroot(scenario, where), build_target(scenario, where)
    matrix = write_matrix(scenario.matrix, where)
    args = ["--matrix-dir", str(matrix), "doctor", "--sysroot", str(sysroot)]
    args += ["--python", str(python)]
    args += ["--release", scenario.release] if scenario.release else []
    args += ["--torch", scenario.torch] if scenario.torch else []
    prefix: list[str] = []
    if scenario.unprivileged:
        for node in (sysroot / "dev").glob("neuron*"):
            node.chmod(0)
        prefix = DROP_ROOT_OVERRIDE if os.getuid() == 0 else []
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEURON_", "AWS_", "XLA_"))}
    with imds_environment(scenario) as aws:
        env.update({**aws, **scenario_env(scenario, where), "NO_COLOR": "1"})
        run = cli_runner(where, base_env=env, timeout=120, prefix=prefix)
        yield lambda *extra, **kwargs: run(*args, *extra, **kwargs)


def run_scenario_doctor(name: str, where: Path, *extra: str) -> dict[str, dict[str, str]]:
    """The findings, by check, of ``doctor --level 1`` on the scenario so named (it must fail)."""
    result = run_doctor(load_scenario(name), where, "--format", "json", "--level", "1", *extra)
    assert result.returncode == 1, result.stderr
    return {f["check"]: f for f in json.loads(result.stdout)["findings"]}
