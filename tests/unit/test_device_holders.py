"""Processes holding Neuron devices, found as fuser finds them: the real /proc of this machine,
and a host's /proc under a sysroot whose fd links are read, never followed."""

from __future__ import annotations

import os
from pathlib import Path

from neuron_env.probe.holders import device_holders, in_host_pid_namespace
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


def test_a_holder_with_a_command_line_past_4_kib_is_shown_cut_not_refused(tmp_path: Path) -> None:
    # A torchrun launcher with every hyperparameter spelled out: real /proc reports size 0 for
    # cmdline and returns all of it; the probe once refused such a file and doctor exited 3.
    fake_node(tmp_path, "neuron0")
    fds = tmp_path / "proc" / "4242" / "fd"
    fds.mkdir(parents=True)
    (fds / "9").symlink_to("/dev/neuron0")
    argv = [b"torchrun", b"--nproc_per_node=64", b"train.py"]
    argv += [f"--layer-{i}-dropout=0.1".encode() for i in range(400)]  # about 9 KiB
    (tmp_path / "proc" / "4242" / "cmdline").write_bytes(b"\0".join(argv) + b"\0")
    found, unreadable = device_holders(Sysroot.at(tmp_path))
    assert [(h.pid, h.devices) for h in found] == [(4242, ("/dev/neuron0",))]
    assert found[0].command.startswith("torchrun --nproc_per_node=64 train.py --layer-0-dropout")
    assert found[0].command.endswith("…")
    assert unreadable == 0


def own_process(root: Path, pid: int, namespace: str | None, nspid: str | None = None) -> None:
    """``/proc/self`` of a sysroot as the kernel shows it: a link to the process's directory,
    whose ``ns/pid`` link reads ``pid:[INODE]`` and whose status has an ``NSpid:`` line."""
    proc = root / "proc" / str(pid)
    (proc / "ns").mkdir(parents=True)
    (root / "proc" / "self").symlink_to(str(pid))
    if namespace is not None:
        (proc / "ns" / "pid").symlink_to(namespace)
    if nspid is not None:
        (proc / "status").write_text(f"Name:\tpython3\nPid:\t{pid}\nNSpid:\t{nspid}\n")


def test_the_hosts_pid_namespace_is_told_by_the_kernels_fixed_inode(tmp_path: Path) -> None:
    own_process(tmp_path, 20268, "pid:[4026531836]", "20268")  # PROC_PID_INIT_INO
    assert in_host_pid_namespace(Sysroot.at(tmp_path)) is True


def test_a_containers_own_pid_namespace_is_not_the_hosts(tmp_path: Path) -> None:
    own_process(tmp_path, 57, "pid:[4026532451]", "57")
    assert in_host_pid_namespace(Sysroot.at(tmp_path)) is False


def test_without_the_link_a_nested_nspid_still_tells_a_container(tmp_path: Path) -> None:
    own_process(tmp_path, 31337, None, "31337\t57")
    assert in_host_pid_namespace(Sysroot.at(tmp_path)) is False


def test_a_proc_that_cannot_tell_is_unknown_not_guessed(tmp_path: Path) -> None:
    own_process(tmp_path, 57, None, "57")
    assert in_host_pid_namespace(Sysroot.at(tmp_path)) is None
    assert in_host_pid_namespace(Sysroot.at(tmp_path / "nothing")) is None
