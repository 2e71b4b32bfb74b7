"""The apt steps are pure data: pinned where the matrix confirms a version, quoted for display."""

from __future__ import annotations

import shlex

import pytest

from neuron_env.errors import BadInput
from neuron_env.install.outcome import SystemPlan
from neuron_env.install.system import HostRelease, apt_steps, check_runnable
from neuron_env.matrix import load_matrix

NOBLE = HostRelease("ubuntu-24.04", "noble", "6.8.0-1021-aws")


def steps_for(release: str, host: HostRelease = NOBLE, os_key: str | None = None) -> SystemPlan:
    return apt_steps(load_matrix().get(release), host, os_key)


def test_confirmed_versions_are_pinned_with_a_glob() -> None:
    plan = steps_for("2.33.0")
    assert plan.steps[-1].argv == (
        "apt-get", "install", "-y", "aws-neuronx-collectives=2.35.43.0*",
        "aws-neuronx-dkms=2.31.7.0*", "aws-neuronx-runtime-lib=2.35.30.0*",
        "aws-neuronx-tools=2.33.38.0*",
    )  # fmt: skip
    assert [n.code for n in plan.notes] == ["system.optional", "system.path"]


def test_unconfirmed_versions_are_unpinned_and_warned_about() -> None:
    plan = steps_for("2.34.0")
    names = ("collectives", "dkms", "runtime-lib", "tools")
    assert plan.steps[-1].argv[3:] == tuple(f"aws-neuronx-{name}" for name in names)
    (warning,) = [n for n in plan.notes if n.code == "system.unpinned"]
    assert warning.message.startswith(
        "Neuron 2.34.0 does not confirm the versions of aws-neuronx-collectives, aws-neuronx-dkms,"
    )


def test_the_repository_line_uses_the_hosts_codename_and_keyring() -> None:
    (write,) = [s for s in steps_for("2.33.1").steps if s.write]
    assert write.content == (
        "deb [signed-by=/etc/apt/keyrings/neuron.gpg] https://apt.repos.neuron.amazonaws.com "
        "noble main\n"
    )
    assert write.write == "/etc/apt/sources.list.d/neuron.list"


def test_every_displayed_command_parses_back_to_its_arguments() -> None:
    for step in steps_for("2.33.0").steps:
        if not step.write:
            assert shlex.split(step.display) == list(step.argv)


def test_another_ubuntu_needs_a_known_codename() -> None:
    other = steps_for("2.33.0", os_key="ubuntu-22.04")
    assert other.codename == "jammy"
    headers = next(s for s in other.steps if "kernel headers" in s.summary)
    assert headers.display == 'apt-get install -y "linux-headers-$(uname -r)"'
    assert not headers.runnable
    assert "system.other-host" in {n.code for n in other.notes}
    with pytest.raises(BadInput, match="for another host"):
        check_runnable(other)
    with pytest.raises(BadInput, match=r"Cannot tell the codename of ubuntu-26\.10"):
        steps_for("2.33.0", os_key="ubuntu-26.10")


def test_ubuntu_26_04_the_recommended_os_is_resolute() -> None:
    plan = steps_for("2.33.0", os_key="ubuntu-26.04")
    assert plan.codename == "resolute"
    (write,) = [s for s in plan.steps if s.write]
    assert write.content.endswith(" resolute main\n")


def test_a_non_ubuntu_host_is_bad_input() -> None:
    with pytest.raises(BadInput, match="apt repository for Ubuntu"):
        steps_for("2.33.0", HostRelease("amzn-2023", None, "6.1"))
