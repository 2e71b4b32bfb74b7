"""``python.path``: what PYTHONPATH and the user's site-packages put ahead of the environment.

doctor reads the environment with ``python -I``; a user's ``python train.py`` also imports from
PYTHONPATH (an environment module's ``module load pytorch``) and, on a system Python or a venv
made with ``--system-site-packages``, from ``~/.local`` (``pip install --user torch``). Each case
builds the real folders, asks the real interpreter what ``import`` finds (the ground truth the
check must agree with), and runs the printed fix to see the check pass.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import CliRunner, cli_runner, machine_env
from tests.support.dists import add_distribution, make_venv, write_dist_info

pytestmark = pytest.mark.integration

MINOR = f"python{sys.version_info.major}.{sys.version_info.minor}"


@pytest.fixture
def run(tmp_path: Path) -> CliRunner:
    home = tmp_path / "home"
    home.mkdir()
    env = {**machine_env(), "HOME": str(home), "NO_COLOR": "1", "COLUMNS": "200"}
    for name in ("PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "VIRTUAL_ENV"):
        env.pop(name, None)
    return cli_runner(tmp_path, base_env=env)


def target(tmp_path: Path, *, system_site: bool = False) -> Path:
    """A venv holding torch 2.14.0+cpu, as a TorchNeuron environment does."""
    venv = tmp_path / "venv"
    python = make_venv(venv)
    if system_site:
        config = venv / "pyvenv.cfg"
        config.write_text(
            config.read_text().replace(
                "include-system-site-packages = false", "include-system-site-packages = true"
            )
        )
    add_distribution(venv, "torch", "2.14.0+cpu")
    return python


def imported(python: Path, env: dict[str, str], cwd: Path, name: str = "torch") -> str:
    """The version of ``name`` a plain ``python`` finds here: what the check must agree with."""
    code = f"import importlib.metadata as m; print(m.version({name!r}))"
    return subprocess.run(
        [str(python), "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True
    ).stdout.strip()


def path_finding(run: CliRunner, python: Path, **env: str | None) -> dict[str, str]:
    result = run("doctor", "--python", str(python), "--check", "python.path", "--format", "json",
                 env=env)  # fmt: skip
    assert result.returncode in (0, 1), result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    assert result.returncode == (1 if finding["status"] == "fail" else 0)
    return dict(finding)


def test_a_module_s_torch_on_pythonpath_fails_and_the_fix_keeps_the_other_entries(
    run: CliRunner, tmp_path: Path
) -> None:
    python = target(tmp_path)
    module = tmp_path / "modules" / "pytorch" / "site-packages"
    write_dist_info(module, "torch", "2.5.1")
    kept = tmp_path / "src"  # the user's own code: nothing installed there
    kept.mkdir()
    # as a shell leaves it: an empty entry (the current folder) and a relative one
    pythonpath = f"{kept}::modules/pytorch/site-packages"
    env = {**machine_env(), "PYTHONPATH": pythonpath}
    assert imported(python, env, tmp_path) == "2.5.1"

    finding = path_finding(run, python, PYTHONPATH=pythonpath)
    assert finding["status"] == "fail"
    assert finding["summary"] == (
        "A plain python imports torch 2.5.1 (not the environment's 2.14.0+cpu) "
        f"from PYTHONPATH's {module}"
    )
    assert finding["fix"] == f"export PYTHONPATH={kept}:{tmp_path}"

    fixed = finding["fix"].removeprefix("export PYTHONPATH=")
    assert imported(python, {**env, "PYTHONPATH": fixed}, tmp_path) == "2.14.0+cpu"
    after = path_finding(run, python, PYTHONPATH=fixed)
    assert after["status"] == "ok"
    assert after["summary"] == "PYTHONPATH hides none of the environment's packages"


def test_a_user_install_adds_to_a_venv_with_the_system_s_packages(
    run: CliRunner, tmp_path: Path
) -> None:
    """Such a venv's own site-packages come first, then the user's (``pip install --user``):
    the user's torch is hidden by the venv's, its torch-xla is imported all the same."""
    python = target(tmp_path, system_site=True)
    user_site = tmp_path / "home" / ".local" / "lib" / MINOR / "site-packages"
    write_dist_info(user_site, "torch", "2.5.1")
    write_dist_info(user_site, "torch-xla", "2.5.1")
    env = {**machine_env(), "HOME": str(tmp_path / "home")}
    env.pop("PYTHONPATH", None)
    assert imported(python, env, tmp_path, "torch") == "2.14.0+cpu"
    assert imported(python, env, tmp_path, "torch-xla") == "2.5.1"

    finding = path_finding(run, python)
    assert finding["status"] == "fail"
    assert finding["summary"] == (
        f"A plain python imports torch-xla 2.5.1 (not in the environment) from the user's "
        f"site-packages {user_site}"
    )
    assert finding["fix"] == "export PYTHONNOUSERSITE=1"
    env["PYTHONNOUSERSITE"] = "1"
    with pytest.raises(subprocess.CalledProcessError):
        imported(python, env, tmp_path, "torch-xla")
    assert path_finding(run, python, PYTHONNOUSERSITE="1")["status"] == "ok"


def test_a_venv_without_the_system_s_packages_never_sees_the_user_s(
    run: CliRunner, tmp_path: Path
) -> None:
    python = target(tmp_path)
    user_site = tmp_path / "home" / ".local" / "lib" / MINOR / "site-packages"
    write_dist_info(user_site, "torch", "2.5.1")
    env = {**machine_env(), "HOME": str(tmp_path / "home")}
    env.pop("PYTHONPATH", None)
    assert imported(python, env, tmp_path) == "2.14.0+cpu"
    finding = path_finding(run, python)
    assert finding["status"] == "ok"
    assert finding["summary"] == (
        "No PYTHONPATH, no user site-packages: imports come from the environment"
    )


def test_another_version_of_a_package_no_device_code_needs_is_a_warning(
    run: CliRunner, tmp_path: Path
) -> None:
    python = target(tmp_path)
    add_distribution(tmp_path / "venv", "numpy", "2.1.0")
    folder = tmp_path / "shared"
    write_dist_info(folder, "numpy", "1.26.4")
    write_dist_info(folder, "requests", "2.31.0")  # not in the environment: an addition
    write_dist_info(folder, "jax", "0.4.30")  # another framework: import torch never loads it
    finding = path_finding(run, python, PYTHONPATH=str(folder))
    assert finding["status"] == "warn"
    assert finding["summary"] == (
        f"A plain python imports numpy 1.26.4 (not the environment's 2.1.0) from PYTHONPATH's "
        f"{folder}"
    )
    assert finding["fix"] == "unset PYTHONPATH"


def test_a_snapshot_from_before_the_check_is_not_judged(run: CliRunner, tmp_path: Path) -> None:
    facts = run("facts", "--python", str(target(tmp_path)))
    doc = json.loads(facts.stdout)
    del doc["facts"]["python"]["import_path"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    result = run("doctor", "--facts", str(old), "--check", "python.path", "--format", "json")
    (finding,) = json.loads(result.stdout)["findings"]
    assert finding["status"] == "skip"
    assert finding["summary"] == "Not collected (a snapshot from an older neuron-env)"
