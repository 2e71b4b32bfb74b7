"""The wheel carries the matrix files, and an installed neuron-env finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.support.cli import REPO

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--wheel",
            "--no-isolation",
            "--outdir",
            str(out),
            str(REPO),
        ],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("neuron_env-*.whl")
    return built


def _unpacked_env(site: Path) -> dict[str, str]:
    """Only the unpacked wheel on the import path, and a home folder of the test's own: what
    neuron-env remembers between runs goes there, not into the home of whoever runs the tests."""
    return {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "HOME": str(site.parent)}


def test_the_wheel_ships_every_matrix_file(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    for path in sorted((REPO / "matrices").glob("*.toml")):
        assert f"neuron_env/_data/matrices/{path.name}" in names
    assert "neuron_env/_data/matrices/parsed.json" in names  # the files, parsed ahead
    assert not [n for n in names if n.startswith("tests/")]


def test_the_wheel_ships_the_scripts_it_reads_and_no_maintainer_tool(wheel: Path) -> None:
    names = zipfile.ZipFile(wheel).namelist()
    shipped = sorted(n for n in names if n.startswith("neuron_env/_data/scripts/"))
    assert [n.rsplit("/", 1)[1] for n in shipped] == [
        "bootstrap.sh",
        "github-action.sh",
        "slurm-healthcheck.sh",
    ]
    assert not [n for n in names if n.endswith(("refresh_parsed.py", "test.sh"))]


def test_the_installed_wheel_reads_its_own_matrix_files(wheel: Path, tmp_path: Path) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # Run from the unpacked wheel, away from the source tree, so only its data can be found.
    code = (
        "import sys; from neuron_env.matrix import load_matrix; m = load_matrix()\n"
        "print(m.latest().origin, 'tomllib' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=_unpacked_env(site),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    origin, parsed_toml = proc.stdout.split()
    assert origin.startswith(str(site / "neuron_env" / "_data" / "matrices"))
    assert parsed_toml == "False"  # its parsed.json matched its files: none had to be parsed


def test_the_installed_wheel_runs_its_own_self_test_worker(
    wheel: Path, tmp_path: Path, torch_python: Path
) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = (
        "import sys; from pathlib import Path\n"
        "from neuron_env.selftest import harness, run_smoke\n"
        "result = run_smoke(Path(sys.argv[1]), device='cpu')\n"
        "print(harness.WORKER_DIR, result.ok, result.summary)\n"
    )
    _assert_worker_ran_from(site, "selftest", code, str(torch_python))


def test_the_installed_wheel_reads_its_own_scan_rules(wheel: Path, tmp_path: Path) -> None:
    assert "neuron_env/_data/rules/scan.toml" in zipfile.ZipFile(wheel).namelist()
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    code = "from neuron_env.resources import scan_rules_file; print(scan_rules_file())"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=_unpacked_env(site),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert proc.stdout.strip() == str(site / "neuron_env" / "_data" / "rules" / "scan.toml")


def test_the_installed_wheel_renders_launch_templates_and_ami_recipes(
    wheel: Path, tmp_path: Path
) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    bootstrap = (site / "neuron_env" / "_data" / "scripts" / "bootstrap.sh").read_text()
    args = ["launch-template", "render", "--instance-type", "trn2.48xlarge", "--torch", "2.14",
            "--neuron-env-source", "pypi"]  # fmt: skip
    user_data = _run_unpacked(site, tmp_path, *args, "--format", "user-data")
    assert bootstrap in user_data
    _run_unpacked(
        site, tmp_path, "ami", "render", "--torch", "2.14", "--output", "ami",
        "--neuron-env-source", "pypi",
    )  # fmt: skip
    assert (tmp_path / "ami" / "bootstrap.sh").read_text() == bootstrap
    assert "amazon-ebs" in (tmp_path / "ami" / "neuron.pkr.hcl").read_text()


def _run_unpacked(site: Path, cwd: Path, *args: str) -> str:
    code = "import sys; from neuron_env.cli import main; sys.argv[0] = 'neuron-env'; main()"
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=_unpacked_env(site),
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_the_installed_wheel_runs_its_own_evaluate_worker(
    wheel: Path, tmp_path: Path, torch_python: Path
) -> None:
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    entry = REPO / "tests" / "data" / "evaluate" / "cnn.py"
    code = (
        "import sys; from pathlib import Path\n"
        "from neuron_env.evaluate import Request, evaluate, harness, parse_entry\n"
        "request = Request(Path(sys.argv[1]), parse_entry(sys.argv[2]), device='cpu')\n"
        "result = evaluate(request)\n"
        "print(harness.WORKER_DIR, result.ok, result.summary)\n"
    )
    _assert_worker_ran_from(site, "evaluate", code, str(torch_python), f"{entry}:make")


def _assert_worker_ran_from(site: Path, package: str, code: str, *args: str) -> None:
    """``code`` (run from the unpacked wheel in ``site``, away from the source tree) prints the
    worker folder it used, whether the run passed and its summary: the folder must be the
    wheel's own ``neuron_env/<package>/worker`` and the run must have passed."""
    proc = subprocess.run(
        [sys.executable, "-c", code, *args],
        env=_unpacked_env(site),
        cwd=site.parent,
        capture_output=True,
        text=True,
        check=True,
    )
    worker, ok, summary = proc.stdout.strip().split(" ", 2)
    assert worker == str(site / "neuron_env" / package / "worker")
    assert ok == "True", summary


def test_the_wheel_depends_on_uv_and_an_installed_neuron_env_picks_it(wheel: Path) -> None:
    """``pip install neuron-env`` gives the fast backend: uv lands next to neuron-env's Python."""
    metadata = next(
        n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA")
    )
    requires = [
        line.split(":", 1)[1].strip()
        for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
        if line.startswith("Requires-Dist:")
    ]
    assert any(r.replace(" ", "").startswith("uv>=") for r in requires), requires
    code = "from neuron_env.install.backends import choose_backend; print(choose_backend('auto'))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env={"PATH": "/usr/bin:/bin"},  # no uv on PATH: only the one installed with neuron-env
        capture_output=True,
        text=True,
        check=True,
    )
    assert "Uv" in proc.stdout, proc.stdout
