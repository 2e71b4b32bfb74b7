"""``doctor``'s python.requirements on real venvs: what ``pip check`` says, read from metadata.

The broken environment sees the shared torch 2.13 (a ``.pth`` file, as ``neuron_python`` does) and
holds tiny real wheels whose Requires-Dist cannot be met; the satisfied one is that torch venv.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import DATA, CliRunner
from tests.support.dists import install_wheels, make_venv, plain_wheel, site_packages

pytestmark = pytest.mark.integration

NO_IMDS = {"AWS_EC2_METADATA_DISABLED": "true"}
CHECK = ("--check", "python.requirements", "--format", "json")


@pytest.fixture(scope="module")
def broken_python(tmp_path_factory: pytest.TempPathFactory, torch_python: Path) -> Path:
    where = tmp_path_factory.mktemp("broken-requirements")
    python = make_venv(where / "venv")
    torch_site = site_packages(torch_python.parent.parent)
    (site_packages(where / "venv") / "_torch.pth").write_text(f"{torch_site}\n")
    wheels = [
        plain_wheel(where, "needs-missing", "1.0", ("missing-dep>=1",)),
        plain_wheel(where, "greedy", "1.0", ("torch==2.15.0",)),
        plain_wheel(where, "content", "1.0", (
            "torch>=2.13",
            "missing-dep>=1; python_version < '3'",  # not for this interpreter
            "missing-dep; extra == 'fast'",  # an extra nobody asked for
        )),
    ]  # fmt: skip
    install_wheels(python, wheels)
    egg = site_packages(where / "venv") / "legacy_egg-1.0.egg-info"  # a setup.py develop install
    egg.mkdir()
    (egg / "PKG-INFO").write_text("Metadata-Version: 1.1\nName: legacy-egg\nVersion: 1.0\n")
    (egg / "requires.txt").write_text(
        "missing-egg-dep>=2\n\n[:python_version < '3']\nmissing-dep\n\n[fast]\nmissing-dep\n"
    )
    return python


def requirements_finding(cli: CliRunner, *args: str) -> tuple[int, dict[str, str]]:
    result = cli("doctor", *args, *CHECK, env=NO_IMDS)
    assert result.returncode in (0, 1), result.stderr
    (finding,) = json.loads(result.stdout)["findings"]
    return result.returncode, finding


def test_unmet_requirements_fail_naming_each_package_and_requirement(
    cli: CliRunner, broken_python: Path
) -> None:
    code, finding = requirements_finding(cli, "--python", str(broken_python))
    assert (code, finding["status"]) == (1, "fail")
    summary = finding["summary"]
    assert "needs-missing 1.0 needs missing-dep>=1, but it is not installed" in summary
    assert "greedy 1.0 needs torch==2.15.0, but torch 2.13.0" in summary
    assert "Neuron 2.34.0 pins torch 2.13.0: greedy cannot share an environment" in summary
    assert "legacy-egg 1.0 needs missing-egg-dep>=2, but it is not installed" in summary
    assert "content" not in summary  # its markers and extras leave nothing unmet
    fix = finding["fix"]
    assert "-m pip uninstall -y greedy" in fix
    assert "-m pip install 'missing-dep>=1' torch==2.13.0" in fix  # torch held where it is


def test_a_snapshot_of_the_environment_is_judged_the_same(
    cli: CliRunner, broken_python: Path, tmp_path: Path
) -> None:
    snapshot = tmp_path / "host.json"
    made = cli("facts", "--python", str(broken_python), "-o", str(snapshot), env=NO_IMDS)
    assert made.returncode == 0, made.stderr
    _, live = requirements_finding(cli, "--python", str(broken_python))
    _, saved = requirements_finding(cli, "--facts", str(snapshot))
    assert saved == live


def test_a_satisfied_environment_is_ok(cli: CliRunner, torch_python: Path) -> None:
    code, finding = requirements_finding(cli, "--python", str(torch_python))
    assert (code, finding["status"]) == (0, "ok")
    assert finding["summary"].startswith("The requirements of all ")


def test_a_snapshot_from_before_requirements_were_collected_is_skipped(cli: CliRunner) -> None:
    old = DATA / "snapshots" / "torch-2.13-container.json"
    result = cli("doctor", "--facts", str(old), "--format", "json")
    findings = {f["check"]: f for f in json.loads(result.stdout)["findings"]}
    finding = findings["python.requirements"]
    assert finding["status"] == "skip"
    assert "no Requires-Dist data" in finding["summary"]
    assert "neuron-env facts" in finding["summary"]
    assert findings["python.torch"]["status"] == "ok"  # the rest of the snapshot is still judged
