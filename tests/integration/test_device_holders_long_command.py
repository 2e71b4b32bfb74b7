"""A real process whose command line is longer than the 4 KiB the probe shows holds a Neuron
node: /proc reports its cmdline as size 0 and returns all of it; the probe shows a cut line."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from neuron_env.probe.holders import device_holders
from neuron_env.probe.sysroot import Sysroot


def fake_node(root: Path, name: str) -> Path:
    node = root / "dev" / name
    node.parent.mkdir(parents=True, exist_ok=True)
    node.write_bytes(b"")
    return node


def test_a_real_process_with_a_long_command_line_holding_a_node_is_found(tmp_path: Path) -> None:
    node = fake_node(tmp_path, "neuron2")
    ready = tmp_path / "ready"
    script = (
        "import sys, time, pathlib; f = open(sys.argv[1], 'rb'); "
        "pathlib.Path(sys.argv[2]).touch(); time.sleep(30)"
    )
    args = [sys.executable, "-c", script, str(node), str(ready), *(["--flag=" + "x" * 60] * 100)]
    holder = subprocess.Popen(args)
    try:
        deadline = time.monotonic() + 20
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        found, _ = device_holders(Sysroot.at(tmp_path), proc=Sysroot.at(Path("/")))
    finally:
        holder.kill()
        holder.wait()
    mine = [h for h in found if h.pid == holder.pid]
    assert [h.devices for h in mine] == [("/dev/neuron2",)]
    assert mine[0].command.endswith("…") and len(mine[0].command) <= 4097
