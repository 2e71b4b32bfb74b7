"""``preflight --emit slurm-healthcheck`` validates what it writes into the script.

The script runs on every node; a typo in a setting it embeds fails there, on every node, and Slurm
drains them all. So each setting is checked where it is typed, with exit 2 and the fix.
"""

from __future__ import annotations

import pytest

from tests.support.cli import CliRunner

pytestmark = pytest.mark.integration


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (
            ["--allow", "driver.modul"],
            "Unknown check id 'driver.modul'; did you mean 'driver.module'?",
        ),
        (["--allow", "env.cache", "--allow", "nonsense"], "Unknown check id 'nonsense'"),
        (["--release", "9.99.0"], "No matrix file describes Neuron release '9.99.0'"),
        (["--torch", "1.0"], "No known Neuron release pairs torch-neuronx with PyTorch 1.0"),
        (["--torch", "2.15", "--release", "2.34.0"], "PyTorch 2.13 and 2.14 only, not 2.15"),
        (["--torch", "two"], "--torch 'two' is not a version"),
        (["--timeout", "nan"], "--timeout nan is not a number of seconds"),
        (["--timeout", "inf"], "--timeout inf is not a number of seconds"),
        (["--timeout", "0"], "--timeout 0 is not a number of seconds"),
        (["--timeout", "-30"], "--timeout -30 is not a number of seconds"),
    ],
)
def test_a_setting_that_would_fail_on_every_node_is_refused(
    cli: CliRunner, args: list[str], says: str
) -> None:
    result = cli("preflight", "--emit", "slurm-healthcheck", *args)
    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stdout == ""  # no script to install by mistake
    assert result.stderr.startswith("error: ") and "Traceback" not in result.stderr
    assert says in " ".join(result.stderr.split())
