"""``NEURON_RT_VISIBLE_CORES=0-999999999`` is a clear error in bounded memory in every command that
reads it (issue 38 §4, issue 36 §5): ``doctor`` (its scenario is ``core-range-huge``), ``facts
--format text`` (the Markdown report judges the release) and ``preflight`` (which also decides
whether another process holds the cores it would use). Before, the range was expanded into a set
of a billion numbers: MemoryError. Each command runs under a 2 GiB address-space limit, far below
what that set needs and far above what the command needs.
"""

from __future__ import annotations

import json
import resource
from pathlib import Path

import pytest

from tests.support.cli import cli_runner
from tests.support.hosts import running_host

pytestmark = pytest.mark.integration

HUGE = {"NEURON_RT_VISIBLE_CORES": "0-999999999"}
SAID = "0-999999999 is past any instance's cores (at most 99999)"


def limit_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


@pytest.mark.parametrize(
    "command",
    [
        ("facts", "--format", "text"),
        ("preflight", "--level", "0", "--format", "json"),
        ("doctor", "--format", "json"),
    ],
    ids=lambda c: c[0],
)
def test_a_huge_core_range_is_said_in_bounded_memory(
    tmp_path: Path, command: tuple[str, ...]
) -> None:
    # another process holds devices: cores compared; the scenario sets HUGE
    with running_host("core-range-huge", tmp_path) as host:
        assert host.env.items() >= HUGE.items()
        run = cli_runner(tmp_path, timeout=120)
        args = ("--matrix-dir", str(host.matrix), *command, *host.probe())
        result = run(*args, env=host.env, preexec_fn=limit_memory)
    assert "Traceback" not in result.stderr and "MemoryError" not in result.stderr, result.stderr
    said = " ".join(result.stdout.split())
    if command[0] == "facts":
        assert result.returncode == 0, result.stderr
        assert "NEURON_RT_VISIBLE_CORES" in said
        return
    assert result.returncode == 1, result.stderr  # the host is judged: not ready, said why
    findings = {f["check"]: f for f in json.loads(result.stdout)["findings"]}
    assert SAID in findings["env.variables"]["summary"]
    assert findings["env.cores"]["status"] == "fail"
