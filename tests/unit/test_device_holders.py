"""Processes holding Neuron devices, found as fuser finds them: the real /proc of this machine,
and a host's /proc under a sysroot whose fd links are read, never followed."""

from __future__ import annotations

import os
from pathlib import Path

from neuron_env.probe.holders import device_holders
from neuron_env.probe.sysroot import Sysroot


def fake_node(root: Path, name: str) -> Path:
    node = root / "dev" / name
    node.parent.mkdir(parents=True, exist_ok=True)
    node.write_bytes(b"")
    return node


def test_this_process_holding_a_node_is_found_in_the_real_proc(tmp_path: Path) -> None:
    node = fake_node(tmp_path, "neuron3")
    fake_node(tmp_path, "neuron4")
    with node.open("rb"):
        found, _ = device_holders(Sysroot.at(tmp_path), proc=Sysroot.at(Path("/")))
    mine = [h for h in found if h.pid == os.getpid()]
    assert len(mine) == 1
    assert mine[0].devices == ("/dev/neuron3",)
    assert "python" in mine[0].command or "pytest" in mine[0].command


def test_a_node_no_longer_open_is_no_longer_held(tmp_path: Path) -> None:
    node = fake_node(tmp_path, "neuron0")
    with node.open("rb"):
        pass
    found, _ = device_holders(Sysroot.at(tmp_path), proc=Sysroot.at(Path("/")))
    assert all(h.pid != os.getpid() for h in found)


def test_fd_links_under_a_sysroot_are_read_as_the_host_names_them(tmp_path: Path) -> None:
    fake_node(tmp_path, "neuron0")
    fake_node(tmp_path, "neuron1")
    fds = tmp_path / "proc" / "31" / "fd"
    fds.mkdir(parents=True)
    (fds / "0").symlink_to("/dev/null")
    (fds / "5").symlink_to("/dev/neuron1")  # the host's path: re-rooted, never followed
    (fds / "6").symlink_to("/dev/neuron10")  # no such node on this host: not one of its devices
    (tmp_path / "proc" / "31" / "cmdline").write_bytes(b"neuron-top\0")
    (tmp_path / "proc" / "self").symlink_to("31")
    found, unreadable = device_holders(Sysroot.at(tmp_path))
    assert [(h.pid, h.command, h.devices) for h in found] == [(31, "neuron-top", ("/dev/neuron1",))]
    assert unreadable == 0
