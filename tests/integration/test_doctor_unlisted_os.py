"""On an OS the release does not list (Debian 12, as the development machines run), every
command doctor prints runs as pasted on this host, or is labelled as one for a supported host;
install refuses such an OS naming the supported ways, unless told --allow-unlisted-os, and
never pretends the host is another OS."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tests.support.cli import machine_env
from tests.support.hosts import load_scenario, scenario_doctor
from tests.support.pasted import elsewhere, in_fresh_shell, quoted_command, run_pasted

pytestmark = pytest.mark.integration

OPT_IN = " --allow-unlisted-os"


@pytest.fixture(scope="module")
def judged(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, str]], Path]:
    """The findings of doctor on a Debian 12 host whose target has no PyTorch yet."""
    where = tmp_path_factory.mktemp("debian")
    scenario = dataclasses.replace(load_scenario("unsupported-os"), python={})
    with scenario_doctor(scenario, where) as doctor:
        doc = json.loads(doctor("--format", "json").stdout)
    return {f["check"]: f for f in doc["findings"]}, where


def test_the_install_fixes_carry_the_opt_in_and_run_here(
    judged: tuple[dict[str, dict[str, str]], Path],
) -> None:
    findings, where = judged
    fix = findings["python.torch"]["fix"]
    assert fix.endswith(OPT_IN), fix
    result = in_fresh_shell(
        f"{fix} --sysroot {where / 'sysroot'} --dry-run", elsewhere(where), machine_env("AWS_")
    )
    output = " ".join((result.stdout + result.stderr).split())
    assert result.returncode == 0, output
    assert "Debian GNU/Linux 12 (bookworm) is not an OS Neuron 2.34.0 lists" in output
    assert "nobody supports the result" in output


def test_the_os_fix_labels_the_supported_host_and_says_the_same_as_the_opt_in(
    judged: tuple[dict[str, dict[str, str]], Path],
) -> None:
    findings, _ = judged
    os_fix = findings["platform.os"]["fix"]
    supported, _, here = os_fix.partition("; or, unsupported, on this host: ")
    assert supported.startswith("Use Ubuntu 26.04 LTS (pip wheels)")
    assert supported.endswith("' there") and OPT_IN not in supported
    assert here.startswith("'") and f"{OPT_IN}' (installs the manylinux wheels anyway)" in here


def test_apt_steps_on_a_host_without_the_neuron_apt_repository_are_labelled(
    tmp_path: Path,
) -> None:
    scenario = dataclasses.replace(
        load_scenario("unsupported-os"), remove=("var/lib/dpkg/status",), python={}
    )
    with scenario_doctor(scenario, tmp_path) as doctor:
        doc = json.loads(doctor("--format", "json").stdout)
    packages = next(f for f in doc["findings"] if f["check"] == "system.packages")
    assert packages["fix"].startswith("On an Ubuntu host (the Neuron apt repository serves ")
    assert packages["detail"].startswith("On an Ubuntu host, '")
    assert "--os ubuntu-26.04' prints every apt step to run there." in packages["detail"]


def test_install_refuses_an_unlisted_os_naming_the_supported_ways(
    judged: tuple[dict[str, dict[str, str]], Path],
) -> None:
    findings, where = judged
    fix = findings["python.torch"]["fix"].removesuffix(OPT_IN)
    result = in_fresh_shell(
        f"{fix} --sysroot {where / 'sysroot'} --dry-run", elsewhere(where), machine_env("AWS_")
    )
    assert result.returncode == 2, result.stderr
    said = " ".join(result.stderr.split())
    assert (
        "This host runs Debian GNU/Linux 12 (bookworm), which Neuron 2.34.0 does not list" in said
    )
    assert "a Neuron DLAMI (Ubuntu 24.04 LTS or Ubuntu 26.04 LTS)" in said
    assert f"add{OPT_IN}." in said
    assert "--os ubuntu" not in said  # the host is not another OS
    image = quoted_command(result.stderr, "image")
    assert_renders = run_pasted(image, machine_env("AWS_"), elsewhere(where))
    assert assert_renders.returncode == 0, assert_renders.stderr
    assert assert_renders.stdout.startswith("# A TorchNeuron container image")
